//! Each job run and said, for either door: the library's workflow called
//! with the typed inputs a door filled, its plan and report written
//! through `text::console` (the terminal, or the Python package's kept
//! text), its progress and Ctrl-C through `progress`. The command line
//! (`cli`) parses its flags into those inputs and calls these; the
//! Python package calls them with its keywords'.

pub mod design;
pub mod identify;
pub mod linearize;
pub mod plot;
pub mod progress;
pub mod simulate;
pub mod summarize;
pub mod swingup;
pub mod synth;

/// Prints what `write` writes.
pub(crate) fn say(write: impl FnOnce(&mut String)) {
    let mut out = String::new();
    write(&mut out);
    crate::text::console::print_text(&out);
}
