//! What the server's unit tests share: the check of an error as a person reads it.

use bridge::{ErrorCode, WireError};

/// `error` carries `code`, and its message says `part` (the words a person acts on).
#[track_caller]
pub fn assert_error(error: &WireError, code: ErrorCode, part: &str) {
    assert_eq!(error.code, code, "{error}");
    assert!(error.message.contains(part), "{error}");
}
