//! The page tools (`page_snapshot`, `page_act`, `page_read`, `page_find`, `page_wait`) as server
//! tools: what each is ([`ABOUT`]) is here, their arguments' schemas and reader are
//! `bridge::page_ops`' (the page runtime shares them), their ref routing and the framing of the
//! page's answer `page_tools.rs`'; the dispatcher resolves the tab, passes the gate and offers
//! trusted input after an act that had no effect. An act whose load landed on another page goes on
//! with that page's snapshot where it asked for a snapshot and page tools are allowed there.

use std::time::Instant;

use bridge::page_ops::{self, PageOp, PageReply};
use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::table::{About, Call, Hints, Needs, ReadFrom, Reading, ServerTool};
use super::typed::{Arguments, TabIdArgument};
use super::{Failure, TabwireMcp};
use crate::browser_tools::PageTab;
use crate::hub::CallFiles;
use crate::page_tools::{self, LandedPage, Routed};

/// The page tool `bridge::page_ops::PAGE_TOOLS[I]`.
pub(crate) struct PageTool<const I: usize>;

/// What each page tool is, in `page_ops::PAGE_TOOLS`' order.
const ABOUT: [About; 5] = [
    page_tool(
        page_ops::SNAPSHOT,
        "Page snapshot",
        "What a person sees, one element a line: role, ref (eN, to act on), \"name\", states; \
         long text cut (see page_read). Optional subtree (ref or selector), budget, cursor.",
        true,
    ),
    page_tool(
        page_ops::ACT,
        "Act on the page",
        "Act on an element as a person would, once it can be used. Answers what changed and \
         whether the page navigated.",
        false,
    ),
    page_tool(
        page_ops::READ,
        "Read the page",
        "The page's (or an element's) visible text, as text or markdown.",
        true,
    ),
    page_tool(
        page_ops::FIND,
        "Find on the page",
        "Elements by visible text, or by role and name, with their refs; or a ref's robust \
         locator.",
        true,
    ),
    page_tool(
        page_ops::WAIT,
        "Wait on the page",
        "Wait (bounded) until text or an element appears, or is gone.",
        true,
    ),
];

/// A page tool: it acts on a page whose origin the user allowed, and only reads, or acts as a
/// person would (which may destroy).
const fn page_tool(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    read_only: bool,
) -> About {
    About {
        name,
        title,
        description,
        hints: Hints::says(read_only, !read_only, true),
        tab_id: TabIdArgument::Shown(Some("default: the ref's tab, else the focused one")),
        needs: Needs::AllowedPageTrustedInput,
    }
}

/// Page tool `I`'s arguments, read into its operation by `bridge::page_ops`, which also has
/// their schema (the page runtime shares both).
pub(crate) struct PageArgs<const I: usize>(PageOp);

impl<const I: usize> Arguments for PageArgs<I> {
    fn schema() -> Value {
        page_ops::input_schema(ABOUT[I].name).expect("every page tool has a schema")
    }

    fn parse(about: &About, args: JsonObject) -> Result<PageArgs<I>, WireError> {
        let tool = about.name;
        page_ops::parse(tool, Value::Object(args))
            .map(PageArgs)
            .map_err(|why| WireError::new(ErrorCode::InvalidArgs, format!("{tool}: {why}")))
    }
}

impl<const I: usize> ServerTool for PageTool<I> {
    const ABOUT: About = ABOUT[I];
    type Given = PageArgs<I>;
    type Args = Routed;

    async fn run(mcp: &TabwireMcp, call: Call<Routed>) -> Result<CallToolResult, Failure> {
        let page = call.page().clone();
        let answer = ask_page(
            mcp,
            &call.args.op,
            page.tab,
            call.args.doc,
            &page.origin,
            call.trusted_input,
            CallFiles::Named(call.args.files),
        )
        .await?;
        // Issue 26: checked after the fact, against what the tab shows as the answer arrives.
        crate::page_tools::check_still_allowed(
            &answer,
            &page.origin,
            mcp.hub.tab_url(page.tab).as_deref(),
        )
        .map_err(|e| match Self::ABOUT.name {
            page_ops::ACT => e.maybe_performed(),
            _ => e,
        })?;
        let mut answer = mcp.page_tools.answer(answer);
        if let Some(at) = answer.landed.take() {
            let landed = match call.args.op {
                PageOp::Act { snapshot: true, .. } => {
                    landed_page(mcp, &call.peer, page.tab, &at).await
                }
                _ => LandedPage::NotAsked,
            };
            answer.text.push_str(&page_tools::landing(&at, landed));
        }
        // Text only: page tools have no output schema, and the text says every fact once.
        Ok(CallToolResult::success(vec![ContentBlock::text(
            answer.text,
        )]))
    }
}

/// Asks `tab`'s page for `op`, for a call the gate allowed on `origin`: the page's answer.
async fn ask_page(
    mcp: &TabwireMcp,
    op: &PageOp,
    tab: TabId,
    doc: Option<String>,
    origin: &str,
    trusted_input: bool,
    files: CallFiles,
) -> Result<PageReply, WireError> {
    let result = mcp
        .hub
        .page_op(
            op,
            Some(tab),
            doc,
            Some(origin.to_owned()),
            trusted_input,
            files,
        )
        .await?;
    serde_json::from_value(result).map_err(|e| {
        WireError::new(
            ErrorCode::Protocol,
            format!("the page's answer does not fit: {e}"),
        )
    })
}

/// The page an act that asked for a snapshot landed on in `tab` (at `at`): its whole snapshot
/// where page tools are allowed on its origin (never asking the user: a question is the model's
/// own `page_snapshot`), checked after the fact as a call's answer is, and audited as a
/// `page_snapshot` there.
async fn landed_page(
    mcp: &TabwireMcp,
    peer: &Peer<RoleServer>,
    tab: TabId,
    at: &str,
) -> LandedPage {
    let permission = &mcp.safeguards.permission;
    let allowed = |origin: &String| permission.allowed(origin, crate::grants::Need::PageTools);
    let Some(origin) = bridge::origin::text_of(at).filter(allowed) else {
        return LandedPage::NotAllowed;
    };
    let started = Instant::now();
    let snapshot = ask_page(
        mcp,
        &PageOp::whole_page(),
        tab,
        None,
        &origin,
        false,
        CallFiles::Named(Vec::new()),
    )
    .await
    .and_then(|answer| {
        let shown_now = mcp.hub.tab_url(tab);
        crate::page_tools::check_still_allowed(&answer, &origin, shown_now.as_deref())
            .map(|()| answer)
    });
    let outcome = match &snapshot {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.code.as_str().to_owned(),
    };
    let agent = crate::hub::agents::caller_known_as().unwrap_or_default();
    let target = PageTab {
        tab,
        url: at.to_owned(),
        origin,
    };
    mcp.record_audit(
        peer,
        &agent,
        page_ops::SNAPSHOT,
        Some(target),
        outcome,
        started,
    );
    match snapshot {
        Ok(answer) => LandedPage::Shown(mcp.page_tools.answer(answer)),
        Err(error) => LandedPage::Failed(error),
    }
}

impl<const I: usize> ReadFrom<PageArgs<I>> for Routed {
    fn read_from(PageArgs(op): PageArgs<I>, at: &mut Reading<'_>) -> Result<Self, WireError> {
        let routed = at.mcp.page_tools.prepare(op, at.tab)?;
        at.tab = routed.tab;
        Ok(routed)
    }
}
