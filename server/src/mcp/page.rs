//! The page tools (`page_snapshot`, `page_act`, `page_read`, `page_find`, `page_wait`) as server
//! tools: their specs and the reading of their arguments come from `bridge::page_ops`, their ref
//! routing and the framing of the page's answer from `page_tools.rs`; the dispatcher resolves the
//! tab, passes the gate and offers trusted input after an act that had no effect.

use bridge::page_ops::{self, PageReply};
use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};

use super::table::{Call, Needs, ServerTool};
use super::{Failure, TabwireMcp};
use crate::hub::CallFiles;
use crate::page_tools::Routed;

/// The page tool `bridge::page_ops::PAGE_TOOLS[I]`.
pub(crate) struct PageTool<const I: usize>;

impl<const I: usize> ServerTool for PageTool<I> {
    const NAME: &'static str = page_ops::PAGE_TOOLS[I];
    const NEEDS: Needs = Needs::AllowedPageTrustedInput;
    type Args = Routed;

    fn spec() -> Tool {
        let spec = page_ops::specs().swap_remove(I);
        super::listing::page_tool(spec)
    }

    fn read(
        mcp: &TabwireMcp,
        args: JsonObject,
        tab: &mut Option<TabId>,
    ) -> Result<Routed, WireError> {
        let routed = mcp.page_tools.prepare(Self::NAME, args, *tab)?;
        *tab = routed.tab;
        Ok(routed)
    }

    async fn run(mcp: &TabwireMcp, call: Call<Routed>) -> Result<CallToolResult, Failure> {
        let page = call.page().clone();
        let result = mcp
            .hub
            .page_op(
                &call.args.op,
                Some(page.tab),
                call.args.doc,
                Some(page.origin.clone()),
                call.trusted_input,
                CallFiles::Named(call.args.files),
            )
            .await?;
        let answer: PageReply = serde_json::from_value(result).map_err(|e| {
            WireError::new(
                ErrorCode::Protocol,
                format!("the page's answer does not fit: {e}"),
            )
        })?;
        // Issue 26: checked after the fact, against what the tab shows as the answer arrives.
        crate::page_tools::check_still_allowed(
            &answer,
            &page.origin,
            mcp.hub.tab_url(page.tab).as_deref(),
        )
        .map_err(|e| match Self::NAME {
            "page_act" => e.maybe_performed(),
            _ => e,
        })?;
        let answer = mcp.page_tools.answer(answer);
        // Text only: page tools have no output schema, and the text says every fact once.
        Ok(CallToolResult::success(vec![ContentBlock::text(
            answer.text,
        )]))
    }
}
