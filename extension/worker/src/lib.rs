//! Tabwire's MV3 service worker in Rust. `extension/worker.js` registers Chrome's listeners and
//! forwards events to [`web::glue::on_event`]; [`web::glue::start`] restores state and connects
//! to the server. The decisions live in host-tested modules ([`core`], [`adapters`], [`tabs`],
//! [`ports`], [`port_waits`], [`page_life`], [`popup`], [`preload`], [`backoff`], [`outbox`]); [`web`] only touches the
//! browser, and is the only folder that names its bindings (`bridge/tests/glue_apart.rs`).

pub mod adapters;
pub mod backoff;
pub mod core;
pub mod link_problem;
pub mod outbox;
pub mod page_life;
pub mod pairing;
pub mod popup;
pub mod port_waits;
pub mod ports;
pub mod preload;
pub mod tabs;
pub mod user_agent;
pub mod web;
