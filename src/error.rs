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

impl InputError {
    pub fn new(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn require_positive(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(InputError::new(field, value, "a finite number > 0"))
    }
}

/// Checks that `value` is finite and not negative.
pub fn require_non_negative(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(InputError::new(field, value, "a finite number >= 0"))
    }
}

/// Checks that `value` is finite.
pub fn require_finite(field: &str, value: f64) -> Result<(), InputError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(InputError::new(field, value, "a finite number"))
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
