//! Tabwire's content-script runtime ("injector"). `extension/content.js` loads this crate's wasm
//! build (or, on pages whose CSP forbids wasm, its wasm2js build) and calls [`runtime::start`].
//! The page's tools come from the adapters the worker sends; calls run the adapters' steps
//! ([`steps`]) against the DOM ([`dom`], [`web_dom`]); every action on the page goes through
//! [`input`]. The page tools (any page, no adapter) are [`page`].

pub mod backends;
pub mod dom;
#[cfg(test)]
mod fake_dom;
pub mod input;
pub mod page;
pub mod record;
pub mod runtime;
pub mod state;
pub mod steps;
pub mod tools;
mod web_dialogs;
pub mod web_dom;
mod web_files;
mod web_input;
mod web_leaving;
mod web_record;
