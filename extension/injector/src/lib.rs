//! Placeholder until the injector crate lands.
