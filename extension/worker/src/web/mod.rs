//! The service worker's browser glue: everything that names `web_sys`, `js_sys`, `wasm_bindgen`
//! or `wasm_bindgen_futures`. The decisions are the pure modules' ([`crate::core::Core`] and the
//! modules it uses), which return [`crate::core::Action`]s; this folder receives Chrome's events,
//! hands them to the `Core` and carries out what it decides; where browsers differ, it asks
//! [`engine`] (one implementation per browser: Chromium, Firefox). [`state`] and [`chrome`] are leaves every other part uses (the one `Core`,
//! the bindings), so the glue has no import cycles.

pub mod browser;
pub mod chrome;
pub mod debugger;
pub mod downloads;
mod engine;
pub mod frames;
pub mod glue;
pub mod handoff;
pub mod popup;
mod state;
pub mod tab_groups;
