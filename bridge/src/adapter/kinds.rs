//! The step kinds of the adapter language, listed once: this table drives decoding (which fields
//! each kind takes and needs), `STEP_KINDS`, [`Step::kind`], which steps act on the page, and the
//! checks that keep the JSON Schema and ADAPTERS.md in step with the model (`bridge/tests`).
//! A kind added here and not to [`Step`] (or the other way round) does not compile.

use std::fmt;

use super::Step;

macro_rules! step_kinds {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal,
            needs [$($required:literal),*],
            takes [$($optional:literal),*],
            acts: $acts:literal;
    )*) => {
        /// A step's kind, as its `step` field names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum StepKind {
            $($(#[$doc])* $variant,)*
        }

        impl StepKind {
            /// Every kind, in the order ADAPTERS.md documents them.
            pub const ALL: &'static [StepKind] = &[$(StepKind::$variant),*];

            /// The name files use.
            pub const fn name(self) -> &'static str {
                match self {
                    $(StepKind::$variant => $name,)*
                }
            }

            pub fn from_name(name: &str) -> Option<StepKind> {
                StepKind::ALL.iter().copied().find(|kind| kind.name() == name)
            }

            /// The fields a step of this kind must have (besides `step`).
            pub const fn required(self) -> &'static [&'static str] {
                match self {
                    $(StepKind::$variant => &[$($required),*],)*
                }
            }

            /// The fields a step of this kind may have besides the required ones.
            pub const fn optional(self) -> &'static [&'static str] {
                match self {
                    $(StepKind::$variant => &[$($optional),*],)*
                }
            }

            /// Whether a step of this kind acts on the page as a person's input does (the page
            /// may react to it), as opposed to waiting, reading or structuring the call.
            pub const fn acts_on_page(self) -> bool {
                match self {
                    $(StepKind::$variant => $acts,)*
                }
            }
        }

        /// Every step kind, as written in files.
        pub const STEP_KINDS: &[&str] = &[$($name),*];

        impl Step {
            pub fn kind(&self) -> StepKind {
                match self {
                    $(Step::$variant { .. } => StepKind::$variant,)*
                }
            }
        }
    };
}

step_kinds! {
    /// Wait until an element is visible / attached / gone.
    Wait = "wait", needs ["selector"], takes ["until", "timeout_ms"], acts: false;
    Click = "click", needs [], takes ["selector", "navigates"], acts: true;
    Dblclick = "dblclick", needs [], takes ["selector"], acts: true;
    Hover = "hover", needs [], takes ["selector"], acts: true;
    ScrollIntoView = "scroll_into_view", needs [], takes ["selector"], acts: true;
    Fill = "fill", needs ["selector", "value"], takes [], acts: true;
    Clear = "clear", needs ["selector"], takes [], acts: true;
    /// Insert `value` at the caret (placed first at `at`: start, end, or after a text).
    Type = "type", needs ["selector", "value"], takes ["at", "nth"], acts: true;
    /// Place the caret at `at` (start, end, or after the `nth` occurrence of a text).
    Caret = "caret", needs ["selector", "at"], takes ["nth"], acts: true;
    /// Select the `nth` occurrence of `value` (all without it).
    SelectText = "select_text", needs ["selector"], takes ["value", "nth"], acts: true;
    /// Drag the element onto the one `to` names.
    Drag = "drag", needs ["selector", "to"], takes [], acts: true;
    Blur = "blur", needs [], takes ["selector"], acts: true;
    Press = "press", needs ["key"], takes ["selector", "navigates"], acts: true;
    /// With exactly one of `value` and `label`.
    Select = "select", needs ["selector"], takes ["value", "label"], acts: true;
    Check = "check", needs [], takes ["selector"], acts: true;
    Uncheck = "uncheck", needs [], takes ["selector"], acts: true;
    /// Put files from the user's uploads directory on a file input, or drop them on an element.
    Upload = "upload", needs ["selector", "files"], takes [], acts: true;
    Read = "read", needs ["into"], takes ["selector", "read", "optional"], acts: false;
    Extract = "extract", needs ["selector", "fields", "into"], takes [], acts: false;
    /// With exactly one of `text_equals` and `text_contains`.
    Within = "within",
        needs ["selector", "steps"],
        takes ["text_selector", "read", "text_equals", "text_contains", "timeout_ms"],
        acts: false;
    /// Over exactly one of `selector` and `items` (with `as`).
    ForEach = "for_each", needs ["steps"], takes ["selector", "items", "as", "into"], acts: false;
    /// On exactly one of `selector` and `var`.
    If = "if", needs [], takes ["selector", "var", "then", "else"], acts: false;
    Frame = "frame", needs ["selector", "steps"], takes [], acts: false;
    Navigate = "navigate", needs ["url"], takes [], acts: false;
    Return = "return", needs ["value"], takes [], acts: false;
    /// End the call with a REFUSED error carrying `message` (the site's own words, read into a
    /// variable: a form the site refused).
    Fail = "fail", needs ["message"], takes [], acts: false;
    /// How to answer the page's next dialog (`confirm`, `prompt`, leave-page).
    Dialog = "dialog", needs ["answer"], takes ["text"], acts: false;
    Fetch = "fetch",
        needs ["url", "into"],
        takes ["response", "timeout_ms", "records", "fields"],
        acts: false;
}

impl StepKind {
    /// Every field a step of this kind may have (besides `step`), required ones first.
    pub fn fields(self) -> impl Iterator<Item = &'static str> {
        self.required().iter().chain(self.optional()).copied()
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_again() {
        for (i, kind) in StepKind::ALL.iter().enumerate() {
            assert_eq!(StepKind::from_name(kind.name()), Some(*kind));
            assert_eq!(STEP_KINDS[i], kind.name());
            let fields: Vec<&str> = kind.fields().collect();
            let mut unique = fields.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), fields.len(), "{kind}: a field listed twice");
        }
        assert_eq!(StepKind::from_name("smash"), None);
    }
}
