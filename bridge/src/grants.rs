//! The user's grants as the server and the extension both know them: what one origin allows
//! ([`Grant`]), what a caller needs ([`Need`]), and a change the user asks for ([`GrantChange`]),
//! checked here once for the worker (before it forwards the popup's request) and the server
//! (before it writes). The server keeps the grants (`server/src/grants.rs`) and pushes the list
//! to the extension (`grants`); the popup shows it and asks for changes (`change_grant`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a caller needs on an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// Page tools (snapshot, act, read, screenshot…) may act on the origin.
    PageTools,
    /// Actions on the origin go through the browser's debugger (trusted input events).
    TrustedInput,
}

/// What the user allowed on one origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Grant {
    pub page_tools: bool,
    #[serde(default)]
    pub trusted_input: bool,
    /// When page tools were allowed, seconds since the Unix epoch.
    #[serde(default)]
    pub since: u64,
}

impl Grant {
    pub fn allows(&self, need: Need) -> bool {
        match need {
            Need::PageTools => self.page_tools,
            Need::TrustedInput => self.page_tools && self.trusted_input,
        }
    }
}

/// Every origin with a grant, by origin: [`crate::Origin`] values, which travel (and are stored)
/// as their canonical strings. On the wire the server sends only canonical ones, so a list with
/// another key is a malformed frame; a file a person or another program edited is read through
/// [`read_stored`], which skips such entries one by one.
pub type GrantList = BTreeMap<crate::Origin, Grant>;

/// A grant list as it is written in a file: origin strings, checked by [`read_stored`].
pub type StoredGrantList = BTreeMap<String, Grant>;

/// An entry of a stored grant list that names no origin, and so allows nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedGrant {
    /// The key as written.
    pub entry: String,
    pub why: crate::origin::OriginError,
}

impl std::fmt::Display for SkippedGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the grant for {:?} was skipped and allows nothing: {} (grants name an origin \
             like https://example.com; allow it again with `tabwire allow`)",
            self.entry, self.why
        )
    }
}

/// The grants of a stored list whose keys are canonical origins, and the entries skipped (each
/// with why): one bad entry never costs the others, and never allows anything.
pub fn read_stored(stored: StoredGrantList) -> (GrantList, Vec<SkippedGrant>) {
    let mut list = GrantList::new();
    let mut skipped = Vec::new();
    for (entry, grant) in stored {
        match crate::Origin::parse(&entry) {
            Ok(origin) => {
                list.insert(origin, grant);
            }
            Err(why) => skipped.push(SkippedGrant { entry, why }),
        }
    }
    (list, skipped)
}

/// A grant list as it is written (the inverse of [`read_stored`] for a list it read).
pub fn to_stored(list: &GrantList) -> StoredGrantList {
    list.iter()
        .map(|(origin, grant)| (origin.to_string(), *grant))
        .collect()
}

/// Allow or take back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantAction {
    /// Allows the need (trusted input implies page tools).
    Allow,
    /// Takes the need back (page tools: everything on the origin).
    Revoke,
}

/// A change of one origin's grant the user asked for (in the popup), as it travels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantChange {
    pub origin: String,
    pub action: GrantAction,
    pub need: Need,
}

impl GrantChange {
    /// Ok when the change may be made for a tab showing `tab_url` (`None`: no tab, as for a row
    /// of the grant list): the origin must be a website's origin, written as one; allowing needs
    /// the tab, and the tab must show that origin. Taking a grant back needs no tab (it only
    /// takes away). The error is the sentence the user reads.
    pub fn check(&self, tab_url: Option<&str>) -> Result<(), String> {
        self.check_origin()?;
        let origin = &self.origin;
        if self.action == GrantAction::Revoke {
            return Ok(());
        }
        match tab_url {
            None => Err(format!(
                "allowing {origin} needs the tab that shows it; open the site and use the popup there"
            )),
            Some(url) => match crate::Origin::of_url(url) {
                Ok(shown) if shown == origin.as_str() => Ok(()),
                Ok(shown) => Err(format!(
                    "the tab shows {shown}, not {origin}: reopen the popup on the site to allow"
                )),
                Err(_) => Err(format!(
                    "the tab shows no website ({}): page tools work on http and https pages only",
                    scheme_of(url)
                )),
            },
        }
    }

    /// Ok when the origin is a website's origin, written as the one canonical [`crate::Origin`]
    /// (`https://a.example`: no path, no user info, lower-case punycode host, no default port).
    pub fn check_origin(&self) -> Result<(), String> {
        let origin = &self.origin;
        match crate::Origin::parse(origin) {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "{origin:?} is not a website origin (like https://example.com): page tools \
                 work on http and https pages only"
            )),
        }
    }

    /// How the change reads in the audit log and the CLI (`allow page_tools`).
    pub fn describe(&self) -> String {
        let action = match self.action {
            GrantAction::Allow => "allow",
            GrantAction::Revoke => "revoke",
        };
        let need = match self.need {
            Need::PageTools => "page_tools",
            Need::TrustedInput => "trusted_input",
        };
        format!("{action} {need}")
    }
}

/// `chrome:`, `file:`… of a URL (the whole of it when it has no scheme), for messages.
fn scheme_of(url: &str) -> &str {
    url.split_once(':').map_or(url, |(scheme, _)| scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(origin: &str, action: GrantAction) -> GrantChange {
        GrantChange {
            origin: origin.into(),
            action,
            need: Need::PageTools,
        }
    }

    #[test]
    fn allowing_needs_the_tab_that_shows_the_origin() {
        let allow = change("http://127.0.0.1:8000", GrantAction::Allow);
        assert_eq!(allow.check(Some("http://127.0.0.1:8000/a?b#c")), Ok(()));
        let other = allow.check(Some("http://127.0.0.1:9000/")).unwrap_err();
        assert!(
            other.contains("the tab shows http://127.0.0.1:9000, not http://127.0.0.1:8000"),
            "{other}"
        );
        // The tab's URL is read as the browser reads it: user info names no origin.
        let tricked = change("http://b.example", GrantAction::Allow)
            .check(Some("http://a.example@b.example/"))
            .unwrap_err();
        assert!(tricked.contains("no website"), "{tricked}");
        let chrome = allow.check(Some("chrome://settings/")).unwrap_err();
        assert!(chrome.contains("no website (chrome)"), "{chrome}");
        assert!(allow.check(None).unwrap_err().contains("needs the tab"));
    }

    #[test]
    fn only_exact_website_origins_are_accepted() {
        for bad in [
            "file:///etc/passwd",
            "chrome://settings",
            "https://a.example/path",
            "HTTPS://A.example",
            "a.example",
            "",
            // Issue 26: user info and default ports are not an origin's canonical form.
            "https://a.example@b.example",
            "https://b.example:443",
            "https://b.example\\@a.example",
        ] {
            let error = change(bad, GrantAction::Revoke).check(None).unwrap_err();
            assert!(error.contains("is not a website origin"), "{bad}: {error}");
        }
    }

    /// Issue 26: grant lists hold `Origin`s; a stored entry of another form is skipped, said why.
    #[test]
    fn stored_lists_keep_canonical_origins_and_say_what_they_skipped() {
        let granted = Grant {
            page_tools: true,
            ..Grant::default()
        };
        let stored: StoredGrantList = [
            ("https://a.example".to_owned(), granted),
            ("https://A.example".to_owned(), granted),
            ("https://b.example/path".to_owned(), granted),
            ("*".to_owned(), granted),
        ]
        .into();
        let (list, skipped) = read_stored(stored);
        let a = crate::Origin::parse("https://a.example").unwrap();
        assert_eq!(list, GrantList::from([(a.clone(), granted)]));
        let entries: Vec<&str> = skipped.iter().map(|s| s.entry.as_str()).collect();
        assert_eq!(
            entries,
            ["*", "https://A.example", "https://b.example/path"]
        );
        let said = skipped[0].to_string();
        assert!(
            said.contains("\"*\" was skipped and allows nothing"),
            "{said}"
        );
        // Written back as canonical strings, and on the wire the same way.
        assert_eq!(
            to_stored(&list).into_keys().collect::<Vec<_>>(),
            ["https://a.example"]
        );
        let json = serde_json::to_value(&list).unwrap();
        assert_eq!(json, serde_json::json!({"https://a.example": granted}));
        assert_eq!(serde_json::from_value::<GrantList>(json).unwrap(), list);
        assert!(
            serde_json::from_value::<GrantList>(serde_json::json!({"https://A.example": granted}))
                .is_err(),
            "a frame with another key is malformed"
        );
    }

    #[test]
    fn revoking_needs_no_tab() {
        assert_eq!(
            change("https://a.example", GrantAction::Revoke).check(None),
            Ok(())
        );
        assert_eq!(
            change("https://a.example", GrantAction::Revoke).check(Some("chrome://newtab/")),
            Ok(())
        );
    }

    #[test]
    fn changes_travel_in_snake_case_and_read_as_commands() {
        let change = GrantChange {
            origin: "https://a.example".into(),
            action: GrantAction::Allow,
            need: Need::TrustedInput,
        };
        let json = serde_json::to_value(&change).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"origin": "https://a.example", "action": "allow", "need": "trusted_input"})
        );
        assert_eq!(change.describe(), "allow trusted_input");
        let grant = Grant {
            page_tools: false,
            trusted_input: true,
            since: 0,
        };
        assert!(
            !grant.allows(Need::TrustedInput),
            "trusted input needs page tools"
        );
    }
}
