//! Tabwire's content-script runtime ("injector"). `extension/content.js` loads this crate's wasm
//! build (or, on pages whose CSP forbids wasm, its wasm2js build) and calls [`web::runtime::start`].
//! The page's tools come from the adapters the worker sends; calls run the adapters' steps
//! ([`steps`]) against the DOM ([`dom`]); every action on the page goes through [`input`]. The
//! page tools (any page, no adapter) are [`page`]. Everything that names the browser's bindings
//! (`web_sys`, `js_sys`, `wasm_bindgen`) is in [`web`], behind the traits the pure modules use
//! ([`dom::Dom`], [`page::PageDom`], [`tools::Backends`]); the pure modules are host-tested
//! over a fake DOM instead (`bridge/tests/glue_apart.rs` keeps it so).

pub mod dom;
#[cfg(test)]
mod fake_dom;
pub mod input;
pub mod page;
pub mod record;
pub mod state;
pub mod steps;
pub mod tools;
pub mod web;
