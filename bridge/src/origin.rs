//! A website's origin, decided once: the one `Origin` type every grant, gate, match-pattern check,
//! label, page tool name and audit line uses, so no two layers can read one URL as two origins.
//!
//! WHATWG URL semantics: the scheme (only `http` and `https` make a website origin), the host
//! lowercased and IDNA-mapped to punycode, the port with the scheme's default elided. A URL with
//! user info (`https://a.example@b.example/`) is refused rather than read either way, and so is
//! anything else a browser and a naive reader could disagree on.
//!
//! Two readers, one answer. With the `whatwg` feature (the server) [`Origin::of_url`] is the `url`
//! crate's WHATWG parser. Without it (the extension's wasm, where the crate (with `idna`'s tables)
//! would add 141,933 bytes to the worker's and 140,865 to the injector's wasm after wasm-opt -Oz,
//! measured 2026-11-26: BENCHMARKS.md) it reads only URLs
//! already in the canonical form the browser's own `URL` parser serializes (Chrome hands the
//! worker every tab, frame, sender and download URL that way), and refuses anything else: the
//! browser canonicalizes, Rust only reads. Both readers answer the same origin wherever the
//! canonical reader accepts (`tests::both_readers_agree_on_what_a_browser_serializes`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `http` or `https`: the only schemes of a website origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WebScheme {
    Http,
    Https,
}

impl WebScheme {
    pub fn as_str(self) -> &'static str {
        match self {
            WebScheme::Http => "http",
            WebScheme::Https => "https",
        }
    }

    /// The port a URL of this scheme uses when it names none.
    pub fn default_port(self) -> u16 {
        match self {
            WebScheme::Http => 80,
            WebScheme::Https => 443,
        }
    }

    fn of(scheme: &str) -> Option<WebScheme> {
        match scheme {
            "http" => Some(WebScheme::Http),
            "https" => Some(WebScheme::Https),
            _ => None,
        }
    }
}

/// A website origin in its canonical form (`https://xn--bcher-kva.example`, `http://127.0.0.1:8000`,
/// `http://[::1]:3000`). Compares, hashes, prints and travels as that string (so a map keyed by
/// origins is looked up by the string too: `Borrow<str>`).
#[derive(Debug, Clone)]
pub struct Origin {
    /// The canonical string, kept so that `as_str` costs nothing.
    serialized: String,
    scheme: WebScheme,
    /// Host as the URL standard serializes it: punycode, lower case, IPv6 in brackets.
    host: String,
    /// The port when it is not the scheme's default.
    port: Option<u16>,
}

/// Why a text is not a website origin (or a URL of one). The text is the one the user reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error("{0:?} is not a URL (expected a website origin like https://example.com)")]
    NotAUrl(String),
    #[error("{0:?} is not a website: only http and https pages have an origin Tabwire acts on")]
    NotAWebsite(String),
    #[error(
        "{0:?} has user info (a name or password before \"@\"): browsers and readers disagree on \
         whose site that is, so it names none"
    )]
    UserInfo(String),
    #[error(
        "{0:?} contains a backslash, which browsers read as \"/\": type the site's origin itself \
         (like https://example.com)"
    )]
    Backslash(String),
    #[error("{0:?} is not written as a canonical origin (expected e.g. {1})")]
    NotCanonical(String, String),
}

impl Origin {
    /// The origin of an http(s) URL (any path, query or fragment), or why it has none a website
    /// can be allowed for.
    pub fn of_url(url: &str) -> Result<Origin, OriginError> {
        #[cfg(feature = "whatwg")]
        {
            whatwg::origin_of(url)
        }
        #[cfg(not(feature = "whatwg"))]
        {
            canonical::origin_of(url)
        }
    }

    /// The origin a canonical origin string names exactly (`https://a.example`, no path, no
    /// trailing slash): what travels on the wire and is stored in `grants.json`.
    pub fn parse(text: &str) -> Result<Origin, OriginError> {
        let origin = Origin::of_url(text)?;
        if origin.serialized == text {
            Ok(origin)
        } else {
            Err(OriginError::NotCanonical(
                text.to_owned(),
                origin.serialized,
            ))
        }
    }

    /// What a person means by `input` (`tabwire allow`): an origin or any URL of the site, with
    /// surrounding blanks ignored. Returns the origin and, when that is not literally what was
    /// typed, a sentence saying what is stored instead. A backslash, user info, `*`, a port out
    /// of range or a non-web scheme name no origin: they are refused.
    pub fn read_typed(input: &str) -> Result<(Origin, Option<String>), OriginError> {
        let typed = input.trim();
        if typed.contains('\\') {
            return Err(OriginError::Backslash(typed.to_owned()));
        }
        let origin = Origin::of_url(typed)?;
        let note = (origin.serialized != typed).then(|| {
            format!(
                "{typed:?} is not an origin itself: stored its origin {origin} (a grant is for a \
                 whole origin; the path, query, case and default port do not narrow it)"
            )
        });
        Ok((origin, note))
    }

    /// Builds from parts a URL parser already canonicalized.
    fn from_parts(scheme: WebScheme, host: String, port: Option<u16>) -> Origin {
        let port = port.filter(|&p| p != scheme.default_port());
        let serialized = match port {
            Some(port) => format!("{}://{host}:{port}", scheme.as_str()),
            None => format!("{}://{host}", scheme.as_str()),
        };
        Origin {
            serialized,
            scheme,
            host,
            port,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.serialized
    }

    pub fn scheme(&self) -> WebScheme {
        self.scheme
    }

    /// The host as the URL standard serializes it (punycode, lower case, IPv6 in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port named when it is not the scheme's default.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The port a connection to this origin uses (the scheme's default when none is named).
    pub fn effective_port(&self) -> u16 {
        self.port.unwrap_or(self.scheme.default_port())
    }

    /// `host[:port]` (what a person reads in a title).
    pub fn authority(&self) -> &str {
        &self.serialized[self.scheme.as_str().len() + 3..]
    }
}

/// The canonical [`Origin`] of an http(s) URL as its string, or `None` (user info, another
/// scheme, not a URL): for the fields that carry an origin as text (labels, audit lines, JSON).
pub fn text_of(url: &str) -> Option<String> {
    Origin::of_url(url).ok().map(|origin| origin.serialized)
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serialized)
    }
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.serialized)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Origin::parse(&text).map_err(serde::de::Error::custom)
    }
}

// Every other field follows from the canonical string: comparing it alone is comparing all.
impl PartialEq for Origin {
    fn eq(&self, other: &Origin) -> bool {
        self.serialized == other.serialized
    }
}

impl Eq for Origin {}

impl PartialOrd for Origin {
    fn partial_cmp(&self, other: &Origin) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Origin {
    fn cmp(&self, other: &Origin) -> std::cmp::Ordering {
        self.serialized.cmp(&other.serialized)
    }
}

impl std::hash::Hash for Origin {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.serialized.hash(state)
    }
}

impl std::borrow::Borrow<str> for Origin {
    fn borrow(&self) -> &str {
        &self.serialized
    }
}

impl PartialEq<str> for Origin {
    fn eq(&self, other: &str) -> bool {
        self.serialized == other
    }
}

impl PartialEq<&str> for Origin {
    fn eq(&self, other: &&str) -> bool {
        self.serialized == *other
    }
}

/// The `url` crate's WHATWG parser (the server).
#[cfg(feature = "whatwg")]
mod whatwg {
    use super::{Origin, OriginError, WebScheme};

    pub(super) fn origin_of(text: &str) -> Result<Origin, OriginError> {
        let url = url::Url::parse(text).map_err(|_| OriginError::NotAUrl(text.to_owned()))?;
        let scheme =
            WebScheme::of(url.scheme()).ok_or_else(|| OriginError::NotAWebsite(text.to_owned()))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(OriginError::UserInfo(text.to_owned()));
        }
        let host = url
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or_else(|| OriginError::NotAUrl(text.to_owned()))?;
        Ok(Origin::from_parts(scheme, host.to_owned(), url.port()))
    }
}

/// The reader of URLs a browser already serialized (the extension's wasm): it accepts exactly the
/// canonical form and refuses the rest, so it never reads a URL differently from the browser.
/// With `whatwg` only the tests use it, to hold it to the `url` crate's answers.
#[cfg(any(not(feature = "whatwg"), test))]
mod canonical {
    use super::{Origin, OriginError, WebScheme};

    pub(super) fn origin_of(text: &str) -> Result<Origin, OriginError> {
        let not_canonical = || {
            OriginError::NotCanonical(
                text.to_owned(),
                "what a browser's URL parser serializes".to_owned(),
            )
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| OriginError::NotAUrl(text.to_owned()))?;
        let scheme = match WebScheme::of(scheme) {
            Some(scheme) => scheme,
            None if super::is_scheme_name(scheme) => {
                return Err(OriginError::NotAWebsite(text.to_owned()));
            }
            None => return Err(not_canonical()),
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, after) = rest.split_at(end);
        if !after.is_empty() && !after.starts_with('/') {
            // A browser always writes the path of an http(s) URL, at least "/".
            return Err(not_canonical());
        }
        if authority.contains('@') {
            return Err(OriginError::UserInfo(text.to_owned()));
        }
        if authority.contains('\\') {
            return Err(OriginError::Backslash(text.to_owned()));
        }
        let (host, port) = split_host_port(authority).ok_or_else(not_canonical)?;
        if !is_canonical_host(host) {
            return Err(not_canonical());
        }
        let port = match port {
            None => None,
            Some(digits) => {
                let port: u16 = digits.parse().map_err(|_| not_canonical())?;
                let canonical = port.to_string() == digits && port != scheme.default_port();
                if !canonical {
                    return Err(not_canonical());
                }
                Some(port)
            }
        };
        Ok(Origin::from_parts(scheme, host.to_owned(), port))
    }

    fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
        if authority.starts_with('[') {
            let close = authority.find(']')?;
            let (host, rest) = authority.split_at(close + 1);
            return match rest {
                "" => Some((host, None)),
                _ => Some((host, Some(rest.strip_prefix(':')?))),
            };
        }
        Some(match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        })
    }

    /// Lower-case ASCII letters, digits, `-`, `_` and dots (IDNA already applied), a bracketed
    /// IPv6 address in its compressed form, or a dotted-quad IPv4 address when the last label is
    /// numeric (the URL standard rewrites `0x7f.1` and `127.1` into one; only its output is
    /// accepted). Checked by hand: `std::net`'s parsers and formatters cost ~3.4 KB a module.
    fn is_canonical_host(host: &str) -> bool {
        if let Some(inside) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            return is_canonical_ipv6(inside);
        }
        if host.is_empty()
            || !host
                .chars()
                .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-' | '_' | '.'))
        {
            return false;
        }
        let last = host
            .strip_suffix('.')
            .unwrap_or(host)
            .rsplit('.')
            .next()
            .unwrap_or_default();
        let numeric = !last.is_empty()
            && (last.chars().all(|c| c.is_ascii_digit()) || last.starts_with("0x"));
        !numeric || is_canonical_ipv4(host)
    }

    /// Four decimal numbers of at most 255, without leading zeros.
    fn is_canonical_ipv4(host: &str) -> bool {
        let parts: Vec<&str> = host.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|part| {
                !part.is_empty()
                    && part.len() <= 3
                    && part.chars().all(|c| c.is_ascii_digit())
                    && !(part.len() > 1 && part.starts_with('0'))
                    && part.parse::<u16>().is_ok_and(|n| n <= 255)
            })
    }

    /// The serialization the URL standard gives (RFC 5952's): lower-case hex groups without
    /// leading zeros, the first longest run of two or more zero groups written `::`.
    fn is_canonical_ipv6(text: &str) -> bool {
        let Some(groups) = ipv6_groups(text) else {
            return false;
        };
        let mut run: Option<(usize, usize)> = None;
        let mut i = 0;
        while i < 8 {
            if groups[i] == 0 {
                let start = i;
                while i < 8 && groups[i] == 0 {
                    i += 1;
                }
                let len = i - start;
                if len >= 2 && run.is_none_or(|(_, best)| len > best) {
                    run = Some((start, len));
                }
            } else {
                i += 1;
            }
        }
        let hex = |n: u16| -> String {
            let digits = b"0123456789abcdef";
            let mut out = String::new();
            let mut started = false;
            for shift in [12, 8, 4, 0] {
                let d = usize::from((n >> shift) & 15);
                if d != 0 || started || shift == 0 {
                    started = true;
                    out.push(char::from(digits[d]));
                }
            }
            out
        };
        let join = |range: &[u16]| range.iter().map(|&g| hex(g)).collect::<Vec<_>>().join(":");
        let canonical = match run {
            Some((start, len)) => format!(
                "{}::{}",
                join(&groups[..start]),
                join(&groups[start + len..])
            ),
            None => join(&groups),
        };
        canonical == text
    }

    /// The eight groups of an IPv6 address of hex groups and at most one `::` (no embedded IPv4:
    /// the standard never serializes one).
    fn ipv6_groups(text: &str) -> Option<[u16; 8]> {
        let group = |g: &str| -> Option<u16> {
            let ok = !g.is_empty() && g.len() <= 4 && g.chars().all(|c| c.is_ascii_hexdigit());
            ok.then(|| u16::from_str_radix(g, 16).ok()).flatten()
        };
        let parse = |part: &str| -> Option<Vec<u16>> {
            if part.is_empty() {
                return Some(Vec::new());
            }
            part.split(':').map(group).collect()
        };
        let mut groups = [0u16; 8];
        match text.split_once("::") {
            Some((head, tail)) => {
                let (head, tail) = (parse(head)?, parse(tail)?);
                if head.len() + tail.len() > 7 || tail.is_empty() && text.ends_with(":::") {
                    return None;
                }
                groups[..head.len()].copy_from_slice(&head);
                groups[8 - tail.len()..].copy_from_slice(&tail);
            }
            None => {
                let all = parse(text)?;
                if all.len() != 8 {
                    return None;
                }
                groups.copy_from_slice(&all);
            }
        }
        Some(groups)
    }
}

/// Whether `scheme` is a well-formed scheme name (a letter, then letters, digits, `+`, `-`, `.`).
#[cfg(any(not(feature = "whatwg"), test))]
fn is_scheme_name(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests;
