//! What a page asks a person for that an agent should not type (issue 28): a password, a
//! one-time code, a CAPTCHA. A whole-page snapshot says so, and the server then suggests handing
//! the step to the person (`browser_handoff`) instead of the model typing secrets it should not
//! have. Only the presence of such fields is read, never a value.

use crate::dom::Dom;

/// Each thing asked for, and the selector that finds it.
const ASKS: &[(&str, &str)] = &[
    ("password", "input[type=password]"),
    ("one-time code", "input[autocomplete~=one-time-code]"),
    (
        "CAPTCHA",
        "iframe[src*=captcha], iframe[src*=challenges.cloudflare.com], iframe[title*=captcha i]",
    ),
];

/// What the page asks for, in [`ASKS`]'s order.
pub fn asked<D: Dom>(dom: &D) -> Vec<String> {
    ASKS.iter()
        .filter(|(_, selector)| dom.query(None, selector).ok().flatten().is_some())
        .map(|(what, _)| (*what).to_owned())
        .collect()
}
