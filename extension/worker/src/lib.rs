//! Tabwire's MV3 service worker in Rust. `extension/worker.js` registers Chrome's listeners and
//! forwards events to [`glue::on_event`]; [`glue::start`] restores state and connects to the
//! server. The decisions live in host-tested modules ([`core`], [`adapters`], [`tabs`],
//! [`ports`], [`page_life`], [`popup`], [`backoff`], [`outbox`]); [`glue`] and [`chrome`] only touch the
//! browser.

pub mod adapters;
pub mod backoff;
pub mod browser;
pub mod chrome;
pub mod core;
pub mod debugger;
pub mod downloads;
pub mod frames;
pub mod glue;
pub mod link_problem;
pub mod outbox;
pub mod page_life;
pub mod pairing;
pub mod popup;
pub mod popup_glue;
pub mod ports;
pub mod tabs;
pub mod user_agent;
