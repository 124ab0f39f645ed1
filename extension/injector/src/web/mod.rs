//! The injector's browser glue: everything that names `web_sys`, `js_sys` or `wasm_bindgen`.
//! The pure modules (steps, input, page tools, recorder, tools) decide through the traits they
//! own — [`crate::dom::Dom`], [`crate::page::PageDom`], [`crate::tools::Backends`] — and this
//! folder implements them on the real page; a second browser backend would be a sibling of it.
//! [`basics`] is the leaf every other part uses (messages to the service worker, events to the
//! page's world, timers), so the glue has no import cycles.

pub mod backends;
mod basics;
mod dialogs;
pub mod dom;
mod files;
mod input;
mod leaving;
pub mod page;
mod record;
pub mod runtime;
