//! Units of the one `Origin` type: what the URL standard makes of hosts, ports, case, IDNA, IPv6
//! and user info, and that the wasm's canonical reader never disagrees with the `url` crate.

use super::*;

#[cfg(feature = "whatwg")]
fn of(url: &str) -> Result<String, OriginError> {
    Origin::of_url(url).map(|origin| origin.to_string())
}

#[cfg(feature = "whatwg")]
#[test]
fn urls_have_the_origin_the_url_standard_gives() {
    for (url, origin) in [
        ("https://A.Example/inbox?x#y", "https://a.example"),
        ("HTTPS://a.example:443/", "https://a.example"),
        ("http://a.example:80", "http://a.example"),
        ("http://a.example:443/", "http://a.example:443"),
        ("https://a.example:80/", "https://a.example:80"),
        ("http://127.0.0.1:8000/a/b", "http://127.0.0.1:8000"),
        ("http://0x7f.1:8000/", "http://127.0.0.1:8000"),
        ("http://[::1]:3000/", "http://[::1]:3000"),
        ("http://[0:0::1]/", "http://[::1]"),
        ("https://Bücher.example/", "https://xn--bcher-kva.example"),
        (
            "https://xn--bcher-kva.example/",
            "https://xn--bcher-kva.example",
        ),
        ("https://a.example./", "https://a.example."),
        ("https://a.example?q", "https://a.example"),
        ("https://mail.google.test/", "https://mail.google.test"),
        ("https://mail-google.test/", "https://mail-google.test"),
    ] {
        assert_eq!(of(url).unwrap(), origin, "{url}");
    }
}

#[cfg(feature = "whatwg")]
#[test]
fn user_info_other_schemes_and_non_urls_name_no_origin() {
    type Refusal = fn(&OriginError) -> bool;
    let refused: [(&[&str], Refusal); 3] = [
        (
            &[
                "https://a.example@b.example/",
                "https://user:pass@b.example/",
                "https://:pass@b.example/",
            ],
            |e| matches!(e, OriginError::UserInfo(_)),
        ),
        (
            &[
                "chrome://settings",
                "file:///etc/passwd",
                "ftp://a.example/",
                "data:text/html,x",
            ],
            |e| matches!(e, OriginError::NotAWebsite(_)),
        ),
        (
            &["*", "a.example", "https://a.example:99999/", "https://", ""],
            |e| matches!(e, OriginError::NotAUrl(_)),
        ),
    ];
    for (urls, is_why) in refused {
        for url in urls {
            let refusal = Origin::of_url(url).unwrap_err();
            assert!(is_why(&refusal), "{url}: {refusal:?}");
        }
    }
}

#[cfg(feature = "whatwg")]
#[test]
fn what_a_person_types_is_refused_or_reduced_saying_what_is_stored() {
    let (origin, note) = Origin::read_typed(" https://a.example ").unwrap();
    assert_eq!((origin.as_str(), note), ("https://a.example", None));
    let (origin, note) = Origin::read_typed("https://A.example:443/inbox?x").unwrap();
    assert_eq!(origin, "https://a.example");
    assert!(
        note.unwrap()
            .contains("stored its origin https://a.example")
    );
    // The browser reads a.example, a naive reader b.example: it grants nothing.
    assert!(matches!(
        Origin::read_typed(r"https://a.example\@b.example/"),
        Err(OriginError::Backslash(_))
    ));
    for bad in [
        "*",
        "https://a.example:99999",
        "https://a.example@b.example",
        "chrome://x",
    ] {
        assert!(Origin::read_typed(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_canonical_origin_string_is_exactly_one() {
    assert_eq!(
        Origin::parse("http://127.0.0.1:8000")
            .unwrap()
            .effective_port(),
        8000
    );
    let https = Origin::parse("https://a.example").unwrap();
    assert_eq!((https.port(), https.effective_port()), (None, 443));
    assert_eq!(https.authority(), "a.example");
    for text in [
        "https://a.example/",
        "https://A.example",
        "https://a.example:443",
        "https://a.example/x",
        "https://u@a.example",
        "https://a.example:08080",
    ] {
        assert!(Origin::parse(text).is_err(), "{text}");
    }
    let json = serde_json::to_string(&https).unwrap();
    assert_eq!(json, "\"https://a.example\"");
    assert_eq!(serde_json::from_str::<Origin>(&json).unwrap(), https);
    assert!(serde_json::from_str::<Origin>("\"https://A.example/\"").is_err());
}

#[test]
fn the_canonical_reader_refuses_what_a_browser_would_have_rewritten() {
    for url in [
        "https://A.example/",
        "https://a.example:443/",
        "https://a.example:0443/",
        "https://a.example@b.example/",
        "https://a.example\\@b.example/",
        "https://Bücher.example/",
        "http://0x7f.1/",
        "http://127.1/",
        "http://[::FFFF:1.2.3.4]/",
        "http://[0:0::1]/",
        "http://[1:2:3:4:5:6:7::]/",
        "http://[2001:db8::1::1]/",
        "http://[::0:1]/",
        "http://256.0.0.1/",
        "http://01.2.3.4/",
        "https://a.example?q",
        "https://a%2eexample/",
    ] {
        assert!(canonical::origin_of(url).is_err(), "{url}");
    }
}

/// What Chrome hands the worker (tab, frame, sender and download URLs): the canonical reader
/// reads each as the `url` crate does.
#[cfg(feature = "whatwg")]
#[test]
fn both_readers_agree_on_what_a_browser_serializes() {
    for typed in [
        "https://A.Example/inbox?x#y",
        "http://a.example:80/",
        "http://a.example:8080/x",
        "http://0x7f.1:8000/",
        "http://[0:0::1]:3000/",
        "https://Bücher.example/",
        "https://a.example./",
        "http://a_b.example/",
        "https://a.example",
        "http://1.2.3/",
        "http://[2001:DB8:0:0:1:0:0:1]/",
        "http://[::]:8080/",
        "http://[1:0:0:2:0:0:0:3]/",
        "http://[1:2:3:4:5:6:7:0]/",
        "http://[fe80::1:0:0:0]/",
        "http://010.0.0.1/",
    ] {
        // What a browser serializes is what the url crate serializes.
        let serialized = url::Url::parse(typed).unwrap().to_string();
        assert_eq!(
            canonical::origin_of(&serialized),
            whatwg::origin_of(&serialized),
            "{typed} → {serialized}"
        );
        assert!(canonical::origin_of(&serialized).is_ok(), "{serialized}");
    }
}
