//! The `fetch` step: a same-origin GET within the call's deadline, its answer turned into the
//! step's value (moved out of `steps.rs` as it was).

use super::*;

impl<'d, D: PageDom> Run<'d, D> {
    /// A `fetch` step: GET the rendered path, within its deadline and until cancelled, and
    /// turn a good answer into the step's value. Every failure names the request.
    pub(super) async fn fetch(
        &self,
        url: &str,
        body: &FetchBody,
        timeout_ms: Option<u64>,
        label: &str,
    ) -> Result<Value, WireError> {
        let path = template::render_url(url, &self.vars).map_err(|e| template_error(label, e))?;
        fetch::check_rendered_path(&path)
            .map_err(|why| fail(ErrorCode::InvalidArgs, label, format!("GET {why}")))?;
        let request = format!("GET {path}");
        let accept = match body {
            FetchBody::Json | FetchBody::Records { .. } => "application/json",
            FetchBody::Text => "text/plain, */*;q=0.5",
        };
        let start = self.dom.now_ms();
        let deadline = timeout_ms.map_or(self.deadline, |t| (start + t as f64).min(self.deadline));
        let answer = {
            // Dropping the request (timeout, cancellation) aborts it.
            let mut pending = pin!(self.dom.fetch(&path, accept, MAX_RESPONSE_BYTES));
            loop {
                let now = self.dom.now_ms();
                if now >= deadline {
                    return Err(fail(
                        ErrorCode::Timeout,
                        label,
                        format!(
                            "{request} did not answer within {} ms",
                            (now - start).round()
                        ),
                    ));
                }
                if self.cancelled.get() {
                    return Err(fail(
                        ErrorCode::Cancelled,
                        label,
                        format!("the call was cancelled while waiting for {request}"),
                    ));
                }
                let mut tick = pin!(self.dom.settle((deadline - now).min(POLL_MS)));
                let done = poll_fn(|cx| match pending.as_mut().poll(cx) {
                    Poll::Ready(answer) => Poll::Ready(Some(answer)),
                    Poll::Pending => tick.as_mut().poll(cx).map(|()| None),
                })
                .await;
                if let Some(answer) = done {
                    break answer;
                }
            }
        };
        let answer = answer.map_err(|failure| match failure {
            FetchFailure::Network(why) => fail(
                ErrorCode::AdapterError,
                label,
                format!("{request} failed: {why}"),
            ),
            FetchFailure::TooLarge => fail(
                ErrorCode::TooLarge,
                label,
                format!(
                    "{request}: the response is larger than {} MiB",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                ),
            ),
        })?;
        if !(200..300).contains(&answer.status) {
            let body = String::from_utf8_lossy(&answer.body);
            let excerpt: String = body.trim().chars().take(200).collect();
            return Err(fail(
                ErrorCode::AdapterError,
                label,
                format!(
                    "{request} answered HTTP {} {}{}",
                    answer.status,
                    answer.status_text,
                    if excerpt.is_empty() {
                        String::new()
                    } else {
                        format!(": {excerpt}")
                    }
                ),
            ));
        }
        if *body == FetchBody::Text {
            return Ok(Value::String(
                String::from_utf8_lossy(&answer.body).into_owned(),
            ));
        }
        // Through `&str`: the runtime has serde_json's text parser already, while `from_slice`
        // compiled a second parser into its wasm (with the adapter locator's: −7 KB, −15 KB of the JS build).
        let json = std::str::from_utf8(&answer.body)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
        let json = json.map_err(|e| {
            let content_type = if answer.content_type.is_empty() {
                "no Content-Type"
            } else {
                answer.content_type.as_str()
            };
            fail(
                ErrorCode::AdapterError,
                label,
                format!("{request} answered no JSON ({content_type}): {e}"),
            )
        })?;
        match body {
            FetchBody::Records { records, fields } => {
                fetch::project(&json, records.as_deref().unwrap_or(""), fields).map_err(|why| {
                    fail(ErrorCode::AdapterError, label, format!("{request}: {why}"))
                })
            }
            FetchBody::Json | FetchBody::Text => Ok(json),
        }
    }
}
