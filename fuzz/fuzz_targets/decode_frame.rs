//! Fuzzes the bridge message decoder both ways (frames from the extension and from the server):
//! any text decodes or yields an error naming the problem, never a panic; whatever decodes
//! re-encodes to a frame that decodes to the same message.
#![no_main]

use bridge::{ToExtension, ToServer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match ToServer::decode(text) {
        Ok(message) => assert_eq!(ToServer::decode(&message.encode()).ok(), Some(message)),
        Err(bad) => {
            let _ = bad.to_wire_error().to_string();
        }
    }
    match ToExtension::decode(text) {
        Ok(message) => assert_eq!(ToExtension::decode(&message.encode()).ok(), Some(message)),
        Err(bad) => {
            let _ = bad.to_wire_error().to_string();
        }
    }
});
