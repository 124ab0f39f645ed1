//! Fuzzes the adapter file parser and validator: any text is an adapter or a list of located
//! problems, never a panic; a valid adapter answers URL matching and argument questions.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match bridge::adapter::parse_adapter(text) {
        Ok(adapter) => {
            assert!(adapter.validate().is_empty(), "parse_adapter returned an invalid adapter");
            for url in ["http://127.0.0.1:8080/x", "https://todomvc.com/examples/vanillajs/", "file:///"] {
                let _ = adapter.matches_url(url);
            }
            for tool in &adapter.tools {
                let _ = tool.argument_names();
            }
        }
        Err(problems) => assert!(!problems.is_empty(), "an error without a problem"),
    }
});
