//! Chrome match patterns (`https://*.example.com/app/*`, `<all_urls>`): parsing with clear errors,
//! and matching URLs the way Chrome does, so the server and the extension agree on which adapters
//! apply to a page.
//!
//! Ports mean what they mean to Chrome (developer.chrome.com, "Match patterns": the port is
//! optional and "by default, this is treated as a wildcard with the same behavior as `:*`"; its
//! `URLPattern` compares a pattern's port with the URL's *effective* port): a host without a port,
//! or with `:*`, matches every port; `host:port` matches URLs whose effective port is that one,
//! so `https://a.example:443/*` matches `https://a.example/`. A pattern lies within one origin
//! ([`MatchPattern::is_within_origin`]) only when it names that origin's port.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchPattern {
    source: String,
    scheme: Scheme,
    host: Host,
    port: Option<u16>,
    path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scheme {
    All,
    /// `*`: http and https (and their WebSocket twins, as in Chrome).
    Web,
    Exact(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Any,
    /// `*.example.com`: example.com and every subdomain of it.
    Suffix(String),
    Exact(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid match pattern {pattern:?}: {reason} (expected e.g. \"https://*.example.com/*\" or \"<all_urls>\")"
)]
pub struct PatternError {
    pub pattern: String,
    pub reason: String,
}

const SCHEMES: &[&str] = &["http", "https", "ws", "wss", "file", "ftp"];

impl MatchPattern {
    pub fn parse(pattern: &str) -> Result<Self, PatternError> {
        let fail = |reason: &str| PatternError {
            pattern: pattern.to_owned(),
            reason: reason.to_owned(),
        };
        if pattern == "<all_urls>" {
            return Ok(MatchPattern {
                source: pattern.to_owned(),
                scheme: Scheme::All,
                host: Host::Any,
                port: None,
                path: "/*".to_owned(),
            });
        }
        let (scheme, rest) = pattern
            .split_once("://")
            .ok_or_else(|| fail("missing \"://\""))?;
        let scheme = match scheme {
            "*" => Scheme::Web,
            s if SCHEMES.contains(&s) => Scheme::Exact(s.to_owned()),
            _ => {
                return Err(fail(
                    "the scheme must be *, http, https, ws, wss, file or ftp",
                ));
            }
        };
        let slash = rest
            .find('/')
            .ok_or_else(|| fail("missing the path (add \"/*\" for any path)"))?;
        let (authority, path) = rest.split_at(slash);
        let (host, port) = split_port(authority).map_err(|reason| fail(&reason))?;
        let host = if scheme == Scheme::Exact("file".to_owned()) {
            if !host.is_empty() {
                return Err(fail("file patterns have no host (use \"file:///*\")"));
            }
            Host::Any
        } else if host == "*" {
            Host::Any
        } else if let Some(domain) = host.strip_prefix("*.") {
            if domain.is_empty() || domain.contains('*') {
                return Err(fail("\"*.\" must be followed by a domain"));
            }
            Host::Suffix(domain.to_ascii_lowercase())
        } else if host.is_empty() {
            return Err(fail("missing the host"));
        } else if host.contains('*') {
            return Err(fail(
                "\"*\" in the host may only be the whole host or a leading \"*.\"",
            ));
        } else {
            Host::Exact(host.to_ascii_lowercase())
        };
        Ok(MatchPattern {
            source: pattern.to_owned(),
            scheme,
            host,
            port,
            path: path.to_owned(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn matches(&self, url: &str) -> bool {
        let Some(parsed) = ParsedUrl::parse(url) else {
            return false;
        };
        // A website URL matches only when this quick read agrees with the one `Origin`: a URL
        // read two ways (`https://a.example\@b.example/`, user info) matches nothing.
        if matches!(parsed.scheme.as_str(), "http" | "https") {
            let agrees = crate::Origin::of_url(url).is_ok_and(|origin| {
                origin.host() == parsed.host
                    && Some(origin.effective_port()) == parsed.effective_port()
            });
            if !agrees {
                return false;
            }
        }
        let url = parsed;
        let scheme_ok = match &self.scheme {
            Scheme::All => SCHEMES.contains(&url.scheme.as_str()),
            Scheme::Web => matches!(url.scheme.as_str(), "http" | "https" | "ws" | "wss"),
            Scheme::Exact(s) => *s == url.scheme,
        };
        let host_ok = match &self.host {
            Host::Any => true,
            Host::Exact(h) => *h == url.host,
            Host::Suffix(d) => {
                url.host == *d
                    || (url.host.len() > d.len()
                        && url.host.ends_with(d.as_str())
                        && url.host.as_bytes()[url.host.len() - d.len() - 1] == b'.')
            }
        };
        let port_ok = self.port.is_none_or(|p| Some(p) == url.effective_port());
        scheme_ok && host_ok && port_ok && glob_match(&self.path, &url.path)
    }
}

impl MatchPattern {
    /// Whether every URL this pattern matches, as Chrome reads it, is on `origin`: the same
    /// scheme and host, and the origin's port named explicitly (`http://127.0.0.1:8000/*`, or
    /// `https://a.example:443/*` for a default port). `<all_urls>`, `*://`, `*.` hosts, another
    /// host, and a host with no port or `:*` (every port, to Chrome) are broader.
    pub fn is_within_origin(&self, origin: &crate::Origin) -> bool {
        let scheme_ok = matches!(&self.scheme, Scheme::Exact(s) if s == origin.scheme().as_str());
        let host_ok = matches!(&self.host, Host::Exact(h) if h == origin.host());
        let port_ok = self.port == Some(origin.effective_port());
        scheme_ok && host_ok && port_ok
    }

    /// The pattern a model should write for `origin` (`http://127.0.0.1:8000/*`,
    /// `https://a.example:443/*`): the broadest one within it.
    pub fn for_origin(origin: &crate::Origin) -> String {
        format!(
            "{}://{}:{}/*",
            origin.scheme().as_str(),
            origin.host(),
            origin.effective_port()
        )
    }
}

impl fmt::Display for MatchPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    // IPv6 literals keep their colons inside brackets.
    let port_colon = if authority.starts_with('[') {
        authority
            .find(']')
            .and_then(|end| authority[end..].starts_with("]:").then_some(end + 1))
    } else {
        authority.rfind(':')
    };
    match port_colon {
        None => Ok((authority, None)),
        Some(i) => {
            let port = &authority[i + 1..];
            if port == "*" {
                return Ok((&authority[..i], None));
            }
            let number = port
                .parse::<u16>()
                .map_err(|_| format!("{port:?} is not a port number"))?;
            // Chrome compares the port as written with the URL's port as digits: "0080" would
            // never match, so it is refused rather than read as 80.
            if number.to_string() != port {
                return Err(format!("{port:?} is not a port number as a URL writes it"));
            }
            Ok((&authority[..i], Some(number)))
        }
    }
}

struct ParsedUrl {
    scheme: String,
    host: String,
    port: Option<u16>,
    /// Path and query, without the fragment.
    path: String,
}

impl ParsedUrl {
    /// The port a connection uses: the one named, else the scheme's default.
    fn effective_port(&self) -> Option<u16> {
        self.port.or(match self.scheme.as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            "ftp" => Some(21),
            _ => None,
        })
    }

    fn parse(url: &str) -> Option<ParsedUrl> {
        let (scheme, rest) = url.split_once("://")?;
        let rest = rest.split('#').next().unwrap_or_default();
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        let authority = authority.rsplit('@').next().unwrap_or_default();
        let (host, port) = split_port(authority).ok()?;
        let path = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        Some(ParsedUrl {
            scheme: scheme.to_ascii_lowercase(),
            host: host.to_ascii_lowercase(),
            port,
            path,
        })
    }
}

/// `*` matches any run of characters (slashes included); everything else matches itself.
fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            backtrack = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((star, matched)) = backtrack {
            pi = star + 1;
            ti = matched + 1;
            backtrack = Some((star, matched + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Whether `url` is an http(s) URL: the only kind Tabwire opens or navigates a tab to (not
/// `javascript:`, `data:`, `file:`, `chrome:` or another extension's pages).
pub fn is_web_url(url: &str) -> bool {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    scheme.is_some_and(is_web_scheme)
}

fn is_web_scheme(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

/// The scheme `url` has as a browser reads it (leading blanks and any tab or newline dropped, as
/// the URL standard does), or `None` for a relative URL.
pub fn scheme_of(url: &str) -> Option<String> {
    let read: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take_while(|c| !matches!(c, '/' | '?' | '#'))
        .collect();
    let (scheme, _) = read.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_owned())
}

/// Whether a `navigate` step may load `url`: a relative URL (resolved against the page) or an
/// http(s) one; never `javascript:`, `data:`, `file:` or any other scheme. Checked when an
/// adapter loads (on the template's literal start) and again before navigating.
pub fn is_navigable(url: &str) -> bool {
    scheme_of(url).is_none_or(|scheme| is_web_scheme(&scheme))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_within_an_origin_only_when_it_names_that_origin() {
        let within = |pattern: &str, origin: &str| {
            MatchPattern::parse(pattern)
                .unwrap()
                .is_within_origin(&crate::Origin::parse(origin).unwrap())
        };
        assert!(within("http://127.0.0.1:1080/*", "http://127.0.0.1:1080"));
        assert!(within(
            "http://127.0.0.1:1080/app/*",
            "http://127.0.0.1:1080"
        ));
        assert!(within(
            "https://mail.example.com:443/*",
            "https://mail.example.com"
        ));
        assert!(within("http://127.0.0.1:80/*", "http://127.0.0.1"));
        for (pattern, origin) in [
            // No port, or `:*`, is every port to Chrome: never within one origin (issue 26).
            ("http://127.0.0.1/*", "http://127.0.0.1"),
            ("http://127.0.0.1:*/*", "http://127.0.0.1"),
            ("https://mail.example.com/*", "https://mail.example.com"),
            ("http://127.0.0.1:443/*", "http://127.0.0.1"),
            ("<all_urls>", "http://127.0.0.1:1080"),
            ("*://*/*", "http://127.0.0.1:1080"),
            ("*://127.0.0.1:1080/*", "http://127.0.0.1:1080"),
            ("http://127.0.0.1/*", "http://127.0.0.1:1080"),
            ("http://127.0.0.1:8080/*", "http://127.0.0.1:1080"),
            ("http://localhost:1080/*", "http://127.0.0.1:1080"),
            ("https://*.example.com/*", "https://mail.example.com"),
            ("https://example.com:8443/*", "https://example.com"),
            ("http://mail.example.com/*", "https://mail.example.com"),
        ] {
            assert!(!within(pattern, origin), "{pattern} on {origin}");
        }
    }

    #[test]
    fn navigation_goes_to_relative_or_web_urls_only() {
        for url in [
            "results.html?q=a:b",
            "/search?q=x",
            "?page=2",
            "#top",
            "http://a/",
            "HTTPS://a/b",
            "//cdn.example/x",
        ] {
            assert!(is_navigable(url), "{url}");
        }
        for url in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\nscript:alert(1)",
            "\u{1}data:text/html,x",
            "data:text/html,x",
            "file:///etc/passwd",
            "chrome://settings",
            "vbscript:x",
        ] {
            assert!(!is_navigable(url), "{url:?}");
        }
    }

    #[test]
    fn only_http_and_https_urls_are_web_urls() {
        for url in ["http://a/", "https://a.example/x?y", "HTTPS://A/"] {
            assert!(is_web_url(url), "{url}");
        }
        for url in [
            "javascript:alert(1)",
            "data:text/html,<b>x</b>",
            "file:///etc/passwd",
            "chrome://settings",
            "chrome-extension://abc/x.html",
            "about:blank",
            "/relative",
            "",
            " http://a/",
        ] {
            assert!(!is_web_url(url), "{url}");
        }
    }

    fn m(pattern: &str, url: &str) -> bool {
        MatchPattern::parse(pattern).unwrap().matches(url)
    }

    #[test]
    fn hosts_and_ports() {
        assert!(m(
            "http://127.0.0.1/*",
            "http://127.0.0.1:8123/examples/vanillajs/"
        ));
        assert!(m("http://127.0.0.1:8123/*", "http://127.0.0.1:8123/a"));
        assert!(!m("http://127.0.0.1:8123/*", "http://127.0.0.1:8124/a"));
        assert!(m("https://*.example.com/*", "https://example.com/"));
        assert!(m("https://*.example.com/*", "https://a.b.example.com/x"));
        assert!(!m("https://*.example.com/*", "https://badexample.com/"));
        assert!(!m("https://example.com/*", "https://example.com.evil.net/"));
        assert!(m(
            "*://todomvc.com/examples/*",
            "https://todomvc.com/examples/react/#/"
        ));
        assert!(!m("*://todomvc.com/*", "file:///todomvc.com/"));
        assert!(m("<all_urls>", "file:///tmp/x.html"));
        assert!(m("http://[::1]/*", "http://[::1]:9000/"));
    }

    /// Chrome's `URLPattern` compares a pattern's port with the URL's effective port, and a
    /// pattern without one (or with `:*`) matches every port.
    #[test]
    fn ports_are_what_chrome_makes_of_them() {
        assert!(m("http://127.0.0.1/*", "http://127.0.0.1:8124/a"));
        assert!(m("http://127.0.0.1:*/*", "http://127.0.0.1:8124/a"));
        assert!(m("http://127.0.0.1:80/*", "http://127.0.0.1/a"));
        assert!(m("https://a.example:443/*", "https://a.example/"));
        assert!(!m("https://a.example:443/*", "https://a.example:8443/"));
        assert!(!m("http://a.example:443/*", "http://a.example/"));
        // Read two ways, matched by neither.
        assert!(!m("https://b.example/*", "https://a.example\\@b.example/"));
        assert!(!m("https://a.example/*", "https://a.example\\@b.example/"));
        assert!(!m("https://b.example/*", "https://a.example@b.example/"));
        assert!(MatchPattern::parse("http://a.example:0080/*").is_err());
        let origin = crate::Origin::parse("https://a.example").unwrap();
        let pattern = MatchPattern::for_origin(&origin);
        assert_eq!(pattern, "https://a.example:443/*");
        assert!(
            MatchPattern::parse(&pattern)
                .unwrap()
                .is_within_origin(&origin)
        );
    }

    #[test]
    fn paths_glob_and_ignore_fragments() {
        assert!(m(
            "http://h/*/examples/vanillajs/*",
            "http://h/plain/examples/vanillajs/index.html"
        ));
        assert!(!m("http://h/app/*", "http://h/other/app/x"));
        assert!(m("http://h/app/*", "http://h/app/#/frag"));
        assert!(m("http://h/a*c", "http://h/abbbc"));
        assert!(!m("http://h/a*c", "http://h/abbbd"));
        assert!(m("http://h/*", "http://h"));
    }

    #[test]
    fn bad_patterns_say_why() {
        for (pattern, why) in [
            ("example.com", "://"),
            ("gopher://x/*", "scheme"),
            ("https://example.com", "path"),
            ("https://ex*ample.com/*", "host"),
            ("https://*./*", "domain"),
            ("https://h:99999/*", "port"),
        ] {
            let err = MatchPattern::parse(pattern).unwrap_err();
            assert!(err.to_string().contains(why), "{pattern}: {err}");
        }
    }
}
