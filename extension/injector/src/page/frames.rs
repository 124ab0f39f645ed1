//! Cross-origin frames in a snapshot: this runtime cannot read another origin's document, so it
//! asks that frame's own runtime (through the worker, [`PageDom::frame_snapshot`], by the URL the
//! frame was sent to and its place among the document's frames, which holds when the frame went
//! to another page by itself) for its lines and splices them in under the frame's `iframe` line,
//! which names the origin they come from.
//! Their refs carry the frame (`f3e12`) and go straight to that frame's runtime. Every frame is
//! asked at once; a frame that does not answer in time is shown as such; the call never waits
//! longer than that bound.

use std::collections::BTreeMap;

use bridge::page_ops::{FRAME_ANSWER_MS, FrameId, MAX_MAX_CHARS, WireOp};
use serde_json::Value;

use super::PageDom;
use super::snapshot::Line;

/// What the frames of a snapshot added: the document each answering frame showed (nested frames'
/// too), for the server to route their refs with.
pub type FrameDocs = BTreeMap<FrameId, String>;

/// `lines` with each cross-origin frame's content spliced in under its line. `timeout_ms`: what
/// is left of the call; each frame gets at most [`FRAME_ANSWER_MS`] of it, and at most half of it
/// (a frame's own frames get half of that, so nesting ends).
pub async fn splice<D: PageDom>(
    dom: &D,
    lines: Vec<Line>,
    timeout_ms: u64,
) -> (Vec<Line>, FrameDocs) {
    let mut docs = FrameDocs::new();
    if lines.iter().all(|line| line.frame.is_none()) {
        return (lines, docs);
    }
    let wait_ms = FRAME_ANSWER_MS.min(timeout_ms / 2);
    // How many frames showing each URL came before (the worker tells them apart by order).
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    // Every frame is asked before any answer is awaited: the waits overlap.
    let asked: Vec<_> = lines
        .iter()
        .map(|line| match (&line.frame, wait_ms) {
            (Some(frame), 1..) => {
                let nth = seen.entry(frame.src.clone()).or_default();
                *nth += 1;
                // The whole of the frame: the budget and cursor apply to the spliced snapshot.
                let op = WireOp::whole_snapshot(MAX_MAX_CHARS);
                Some(dom.frame_snapshot(frame.clone(), *nth - 1, op, wait_ms))
            }
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(lines.len());
    for (mut line, asked) in lines.into_iter().zip(asked) {
        if line.frame.take().is_none() {
            out.push(line);
            continue;
        }
        let answer = match asked {
            Some(answer) => answer.await,
            None => None,
        };
        let Some((frame, origin, text, doc, nested)) = answer.as_ref().and_then(read_answer) else {
            line.text.push_str(" (not answering)");
            out.push(line);
            continue;
        };
        line.text.push_str(&format!(" [content from {origin}]"));
        let depth = line.depth + 1;
        out.push(line);
        out.extend(text.lines().filter(|l| !l.trim().is_empty()).map(|l| {
            let inner = l.trim_start_matches(' ');
            Line {
                depth: depth + (l.len() - inner.len()),
                text: inner.to_owned(),
                is_text: false,
                frame: None,
            }
        }));
        docs.insert(frame, doc);
        docs.extend(nested);
    }
    (out, docs)
}

/// A frame's answer: its browser frame id (64 bits: Firefox's pass 32), its origin, its snapshot's text, its document and its
/// own frames' documents.
fn read_answer(answer: &Value) -> Option<(FrameId, String, String, String, FrameDocs)> {
    let field = |name: &str| answer.get(name).and_then(Value::as_str);
    let frame = answer
        .get("frame")
        .and_then(Value::as_u64)
        .filter(|&f| f != 0)?;
    let url = field("url")?;
    let origin = bridge::origin::text_of(url).unwrap_or_else(|| url.to_owned());
    let nested = answer
        .get("frames")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(frame, doc)| Some((frame.parse().ok()?, doc.as_str()?.to_owned())))
        .collect();
    Some((
        frame,
        origin,
        field("text")?.to_owned(),
        field("doc")?.to_owned(),
        nested,
    ))
}
