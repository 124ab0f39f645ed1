//! Placeholder until the worker crate lands.
