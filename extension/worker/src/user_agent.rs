//! The browser's name and version for `hello`, read from its user-agent string.

use bridge::protocol::BrowserInfo;

/// Tokens checked in order: the first present names the browser (Edge and Opera also say Chrome).
const BRANDS: &[(&str, &str)] = &[
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("HeadlessChrome/", "HeadlessChrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Firefox/", "Firefox"),
];

pub fn browser_info(user_agent: &str) -> BrowserInfo {
    for (token, name) in BRANDS {
        if let Some(at) = user_agent.find(token) {
            let version: String = user_agent[at + token.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            return BrowserInfo {
                name: (*name).to_owned(),
                version,
                user_agent: user_agent.to_owned(),
            };
        }
    }
    BrowserInfo {
        name: "unknown".to_owned(),
        version: String::new(),
        user_agent: user_agent.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions() {
        let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.7000.1 Safari/537.36";
        let info = browser_info(chrome);
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("Chrome", "156.0.7000.1")
        );
        let edge = format!("{chrome} Edg/156.0.1");
        assert_eq!(browser_info(&edge).name, "Edge");
        let headless = chrome.replace("Chrome/", "HeadlessChrome/");
        assert_eq!(browser_info(&headless).name, "HeadlessChrome");
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";
        let info = browser_info(firefox);
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("Firefox", "153.0")
        );
        assert_eq!(browser_info("curl/8").name, "unknown");
    }
}
