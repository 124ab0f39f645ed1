//! The contract between Tabwire's parts: the WebSocket wire protocol (server ⇄ service worker),
//! the page protocol (service worker ⇄ content script), and the declarative adapter model with its
//! validation, templates, key chords and URL match patterns.
//!
//! This crate builds for the host and for `wasm32-unknown-unknown`; it depends on serde (and RustCrypto's
//! `hmac`/`sha2` for the handshake) only, never on tokio, rmcp or web-sys, so every part of Tabwire can share it.

pub mod adapter;
pub mod agents;
pub mod args;
pub mod browser_ops;
pub mod code_adapter;
pub mod dialog;
pub mod download;
pub mod fetch;
pub mod grants;
pub mod handoff;
pub mod handshake;
pub mod keys;
pub mod lint;
pub mod locator;
pub mod names;
pub mod origin;
pub mod packed;
pub mod page;
pub mod page_ops;
pub mod pattern;
pub mod protocol;
pub mod recording;
pub mod step_failure;
mod tagged;
pub mod template;
pub mod trusted_input;
pub mod upload;
pub mod webmcp;

pub use origin::Origin;
pub use protocol::{ErrorCode, TabId, ToExtension, ToServer, WireError};

/// Version of the wire protocol, exchanged in `hello` / `welcome` and in the handshake's
/// subprotocols. 3 (one step over 1): the mutual proof of the secret in [`handshake`]; pages
/// announce adapter tools by name, adapters travel packed, `hello` carries the code adapters'
/// declarations. A side of any other version is told so. 4: page tools (`page_op`,
/// `STALE_REF`). 5: a `page_op` carries the operation the server read
/// ([`page_ops::WireOp`], not the client's arguments) and its ref's frame.
pub const PROTOCOL_VERSION: u32 = 5;

/// Largest WebSocket frame or page message either side accepts, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
