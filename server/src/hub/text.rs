//! What the hub tells a person when a browser request cannot be made or did not end well: one
//! place for each message, so the same situation reads the same wherever it is met.

use bridge::{ErrorCode, TabId, WireError};

/// Whether tabwire could open its WebSocket port; decides what `NOT_CONNECTED` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Listening,
    /// Something that cannot prove it knows the secret holds the port. We never take it from
    /// them, and tell them nothing.
    PortInUse,
    Failed(String),
}

/// No browser connection: why, and what the user should do (the model relays it). The words are
/// `diagnostics`', which knows what the extension tried.
pub fn not_connected(link: Option<&Link>, port: u16) -> WireError {
    WireError::new(
        ErrorCode::NotConnected,
        crate::diagnostics::not_connected_advice(port, link),
    )
}

/// The only browser connections speak another version of the bridge protocol.
pub fn incompatible(theirs: u32, ours: u32) -> WireError {
    WireError::new(
        ErrorCode::NotConnected,
        format!(
            "the browser extension speaks bridge protocol {theirs} and this tabwire {ours}: \
             they do not work together; load the extension that came with this tabwire (or \
             update the other tabwire process it may be talking to) and reload it"
        ),
    )
}

/// A request's connection closed under it.
pub fn disconnected_during_call() -> WireError {
    WireError::new(
        ErrorCode::NotConnected,
        "the browser extension disconnected during the call (its service worker stopped, or \
         the browser closed); retry once it reconnects (browser_tabs shows it)",
    )
}

pub fn connection_closed() -> WireError {
    WireError::new(ErrorCode::NotConnected, "the browser connection closed")
}

pub fn tab_closed_during_call(tab: TabId) -> WireError {
    WireError::new(
        ErrorCode::TabClosed,
        format!("tab {tab} was closed during the call"),
    )
}

/// A call names a tab the hub does not know: TAB_CLOSED if it closed lately.
pub fn unknown_tab(tab: TabId, recently_closed: bool) -> WireError {
    if recently_closed {
        WireError::new(ErrorCode::TabClosed, format!("tab {tab} was closed"))
    } else {
        WireError::new(
            ErrorCode::NoSuchTab,
            format!("there is no tab {tab} with site tools; browser_tabs lists the tabs"),
        )
    }
}

/// No site tool of that name exists (no tab offers it and no loaded adapter defines it).
pub fn no_such_tool(tool: &str) -> WireError {
    WireError::new(
        ErrorCode::NoSuchTool,
        format!("there is no site tool {tool:?}; browser_tabs lists each tab's tools"),
    )
}

/// The tool exists, but no open tab offers it now.
pub fn no_tab_offers(tool: &str) -> WireError {
    WireError::new(
        ErrorCode::NoSuchTool,
        format!("no open tab offers {tool}; open its site with browser_open"),
    )
}

/// Tabs of several origins offer page tool `tool`: the call must name its tab.
pub fn several_origins_offer(tool: &str, origins: Vec<String>) -> WireError {
    WireError::new(
        ErrorCode::InvalidArgs,
        format!(
            "pages of several sites offer {tool} ({}): pass tab_id to say whose tool to call \
             (browser_tabs lists each tab's origin and tools)",
            origins.join(", ")
        ),
    )
}

/// The call named a tab that does not offer the tool.
pub fn tab_does_not_offer(tab: TabId, tool: &str) -> WireError {
    WireError::new(
        ErrorCode::NoSuchTool,
        format!("tab {tab} does not offer {tool}; browser_tabs lists each tab's tools"),
    )
}

/// A request got no answer in time (`ceiling`: it kept reporting progress until the most any
/// call may take).
pub fn timed_out(what: &str, ms: u64, ceiling: bool) -> WireError {
    let message = if ceiling {
        format!(
            "{what} was still reporting progress after {ms} ms, the most any call may take; the \
             call was cancelled"
        )
    } else {
        format!("{what} did not answer within {ms} ms; the call was cancelled")
    };
    WireError::new(ErrorCode::Timeout, message)
}

/// How the advice to turn trusted input on starts, after the page's own words.
const TRUSTED_INPUT_HINT: &str = ". If this page ignores synthetic input";

/// A `NO_EFFECT` answer after which the user turned trusted input on (when asked): the advice
/// gives way to saying so.
pub fn trusted_input_turned_on(mut error: WireError, origin: &str) -> WireError {
    let said = error
        .message
        .split(TRUSTED_INPUT_HINT)
        .next()
        .unwrap_or_default();
    error.message = format!(
        "{said}. The user has just turned trusted input on for {origin}: call again, and the \
         action goes through Chrome's debugger (Chrome shows its debugging bar meanwhile)."
    );
    error
}

/// A `NO_EFFECT` answer on a page whose origin has no trusted-input grant: the page may ignore
/// synthetic events (`isTrusted` false), so the error names the setting and what it costs.
pub fn with_trusted_input_hint(mut error: WireError, url: Option<&str>) -> WireError {
    if error.code != ErrorCode::NoEffect {
        return error;
    }
    let Some(origin) = url.and_then(bridge::origin::text_of) else {
        return error;
    };
    error.message.push_str(&format!(
        "{TRUSTED_INPUT_HINT} (events whose isTrusted is false, as some \
         payment forms, editors and anti-automation checks do), the user can turn on trusted \
         input for {origin}: `tabwire allow --trusted-input {origin}`, or \"Trusted input\" in \
         Tabwire's popup. Chrome then shows a \"Tabwire started debugging this browser\" bar \
         while Tabwire acts there."
    ));
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_connected_says_why_and_what_to_do() {
        let in_use = not_connected(Some(&Link::PortInUse), 17373);
        assert_eq!(in_use.code, ErrorCode::NotConnected);
        assert!(
            in_use.message.starts_with(
                "No browser can connect: something else is listening on port 17373 of 127.0.0.1 and did not prove"
            ),
            "{in_use}"
        );
        assert!(not_connected(None, 9).message.contains("`tabwire setup`"));
        assert!(
            not_connected(Some(&Link::Failed("denied".into())), 9)
                .message
                .contains("127.0.0.1:9 (denied)")
        );
        let old = incompatible(1, 2);
        assert!(
            old.message.contains("protocol 1 and this tabwire 2"),
            "{old}"
        );
    }

    #[test]
    fn a_tool_or_tab_that_is_not_there_has_its_own_words() {
        assert_eq!(unknown_tab(4, true).code, ErrorCode::TabClosed);
        assert_eq!(unknown_tab(4, false).code, ErrorCode::NoSuchTab);
        for e in [
            no_such_tool("x"),
            no_tab_offers("x"),
            tab_does_not_offer(3, "x"),
        ] {
            assert_eq!(e.code, ErrorCode::NoSuchTool);
        }
        assert_eq!(
            timed_out("x in tab 1", 500, false).message,
            "x in tab 1 did not answer within 500 ms; the call was cancelled"
        );
    }
}
