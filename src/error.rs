//! Typed errors of the library. The binary wraps them with context (anyhow)
//! and maps input errors to exit code 2.

use thiserror::Error;

/// A user-supplied value outside its allowed range. The message names the
/// field, the value given and what is allowed, so a user can fix the input
/// without reading the code.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("invalid {field} = {value}: must be {allowed}")]
pub struct InputError {
    pub field: String,
    pub value: String,
    pub allowed: String,
}

/// The most characters of a value a message repeats: a value pasted by
/// mistake (a whole file in a flag) is named, not echoed whole.
pub const MAX_ECHOED_CHARS: usize = 200;

impl InputError {
    pub fn new(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            value: echoed(&value.to_string()),
            allowed: allowed.into(),
        }
    }

    /// [`Self::new`] for a number, written as a person would type it
    /// (`1e-300`, not three hundred zeros).
    pub fn number(field: impl Into<String>, value: f64, allowed: impl Into<String>) -> Self {
        Self::new(field, number(value), allowed)
    }
}

/// A number as a person would type it: [`decimal`]'s digits, in exponent
/// form when very large or very small (`1e200`, `1e-300`, not hundreds of
/// zeros).
pub fn number(x: f64) -> String {
    match x != 0.0 && x.is_finite() && !(1e-4..1e6).contains(&x.abs()) {
        true => format!("{:e}", decimal(x).parse::<f64>().unwrap_or(x)),
        false => decimal(x),
    }
}

/// `text`, or its first [`MAX_ECHOED_CHARS`] characters and how many more
/// there were.
pub fn echoed(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHOED_CHARS) {
        None => text.to_string(),
        Some((end, _)) => format!(
            "{}… ({} characters in all)",
            &text[..end],
            text.chars().count()
        ),
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn require_positive(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(InputError::number(field, value, "a finite number > 0"))
    }
}

/// Checks that `value` is finite and not negative.
pub fn require_non_negative(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(InputError::number(field, value, "a finite number >= 0"))
    }
}

/// Checks that `value` is finite.
pub fn require_finite(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(InputError::number(field, value, "a finite number"))
    }
}

/// A number with the digits it carries, for messages: binary rounding is
/// dropped (`0.42`, not `0.42000000000000004`, for 0.6 × 0.7; `0.01686`
/// for a difference of two clock readings), twelve significant digits kept.
pub fn decimal(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let rounded: f64 = format!("{x:.11e}").parse().unwrap_or(x);
    rounded.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_a_value_without_echoing_all_of_it() {
        let e = InputError::number("tolerance_m", 1e-300, "a length");
        assert_eq!(
            e.to_string(),
            "invalid tolerance_m = 1e-300: must be a length"
        );
        assert_eq!(InputError::number("x", 0.6, "y").value, "0.6");
        assert_eq!(InputError::number("x", 1e200, "y").value, "1e200");
        let pasted = "x".repeat(100_000);
        let e = InputError::new("axis", &pasted, "NAME=AXIS");
        assert!(e.to_string().len() < 400, "{}", e.to_string().len());
        assert!(
            e.value.ends_with("(100000 characters in all)"),
            "{}",
            e.value
        );
        // Multi-byte characters are cut between characters, not inside one.
        assert!(
            InputError::new("a", "µ".repeat(300), "b")
                .value
                .starts_with("µµ")
        );
    }
}
