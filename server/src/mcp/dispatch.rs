//! The one way a server tool ([`super::table`]) is run: `tab_id` read once (absent and `null`
//! alike mean "not given", for every tool, site tools included), the tool's arguments read, what
//! it needs provided — the tab it names, or the page it acts on resolved and passed through the
//! permission gate (the one place the gate is called, with the offer of trusted input after an
//! action that had no effect) — the audit target learnt, a tab another agent holds refused
//! (issue 28: the hub decides, `hub::agents`), then its handler.

use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::Value;

use super::table::{Call, Needs, ReadFrom, Reading, Request, ServerTool};
use super::typed::Arguments;
use super::{Failure, TabwireMcp};
use crate::browser_tools;
use crate::grants::Need;

/// Runs one call of tool `T`; `target` learns the tab and origin it acts on, for the audit log
/// (also when the gate refuses it).
pub(super) async fn run<T: ServerTool>(
    mcp: &TabwireMcp,
    request: Request<'_>,
) -> Result<CallToolResult, Failure> {
    let Request {
        mut args,
        peer,
        report,
        target,
    } = request;
    let tab = take_tab_id(&mut args)?;
    let given = T::Given::parse(&T::ABOUT, args)?;
    let mut at = Reading { mcp, tab };
    let args = T::Args::read_from(given, &mut at)?;
    let tab = at.tab;
    // A tool that names its tab names it whatever else the call needs.
    if T::ABOUT.needs == Needs::NamedTab && tab.is_none() {
        return Err(WireError::new(
            ErrorCode::InvalidArgs,
            format!(
                "{} needs `tab_id`, a tab id from browser_tabs",
                T::ABOUT.name
            ),
        )
        .into());
    }
    let needs = T::needs(&args);
    let (page, trusted_input) = match needs {
        Needs::Nothing => {
            *target = T::audited(mcp, &args, tab);
            (None, false)
        }
        Needs::NamedTab => {
            *target = T::audited(mcp, &args, tab);
            mcp.hub.admit(tab)?;
            (None, false)
        }
        Needs::AllowedPage | Needs::AllowedPageTrustedInput => {
            let page = browser_tools::resolve_tab(&mcp.hub, tab).await?;
            *target = Some(page.clone());
            // Another agent's tab is refused before the gate asks the user anything.
            mcp.hub.admit(Some(page.tab))?;
            let allowed = mcp
                .safeguards
                .permission
                .authorize(peer, &page.origin, Need::PageTools)
                .await?;
            (Some(page), allowed.trusted_input)
        }
    };
    let origin = page.as_ref().map(|p| p.origin.clone());
    let call = Call {
        args,
        tab,
        page,
        trusted_input,
        report,
        peer: peer.clone(),
    };
    match (T::run(mcp, call).await, origin) {
        (Err(failure), Some(origin))
            if failure.error.code == ErrorCode::NoEffect
                && needs == Needs::AllowedPageTrustedInput =>
        {
            let permission = &mcp.safeguards.permission;
            Err(permission
                .offer_trusted_input(peer, &origin, failure.error)
                .await
                .into())
        }
        (outcome, _) => outcome,
    }
}

/// Removes and checks the optional `tab_id` argument: absent and `null` both mean "not given".
pub(super) fn take_tab_id(args: &mut JsonObject) -> Result<Option<TabId>, WireError> {
    match args.remove("tab_id") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            WireError::new(
                ErrorCode::InvalidArgs,
                format!("argument \"tab_id\" must be a non-negative integer, got {value}"),
            )
        }),
    }
}
