//! What a run says on a terminal: each workflow's plan and report as text,
//! written once here for every door onto the library (the `tether-sweep`
//! binary prints it; a notebook or another program can print or log the
//! same). Numbers are written with the digits they carry
//! ([`crate::error::decimal`]), lists of them as `[0, 0.1, 0.42]`.
//!
//! Layer: above `workflow`, whose requests, plans and reports it reads.

pub mod bench;
pub mod bodies;
pub mod console;
pub mod design;
pub mod identify;
pub mod linearize;
pub mod simulate;
pub mod swingup;

/// Appends a line (or, with only `out`, an empty line) to `out`.
macro_rules! sayln {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Appends text without ending the line.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = write!($out, $($arg)*);
    }};
}

pub(crate) use {say, sayln};

pub use crate::error::decimal as number;

/// Numbers as a list: `[0, 0.1, 0.42]`.
pub fn numbers(xs: &[f64]) -> String {
    format!(
        "[{}]",
        xs.iter().map(|&x| number(x)).collect::<Vec<_>>().join(", ")
    )
}

/// "thread layout: 3, workgroup layout: 12", or None when nothing ran on
/// the GPU.
pub fn layouts_text(counts: &std::collections::BTreeMap<&str, u64>) -> Option<String> {
    (!counts.is_empty()).then(|| {
        counts
            .iter()
            .map(|(name, n)| format!("{name} layout: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// `x` with `digits` decimals, never "-0.00": a value that rounds to zero
/// has no sign to show.
pub fn fixed(x: f64, digits: usize) -> String {
    let text = format!("{x:.digits$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => text,
    }
}

/// A wall time in the unit a person plans with: "40 s", "12 min",
/// "8.7 h", "3.1 days".
pub fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 90.0 * 60.0 => format!("{:.0} min", s / 60.0),
        s if s < 48.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_rounding_to_zero_shows_no_sign() {
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.006, 2), "-0.01");
        assert_eq!(fixed(0.49, 1), "0.5");
        assert_eq!(fixed(-3.25, 1), "-3.2");
    }

    #[test]
    fn durations_are_in_the_unit_one_plans_with() {
        assert_eq!(duration(40.2), "40 s");
        assert_eq!(duration(720.0), "12 min");
        assert_eq!(duration(8.7 * 3600.0), "8.7 h");
        assert_eq!(duration(3.1 * 86400.0), "3.1 days");
    }

    #[test]
    fn numbers_carry_their_digits_not_binary_rounding() {
        assert_eq!(number(0.6 * 0.7), "0.42");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(1e-7), "0.0000001");
        assert_eq!(number(2300.0), "2300");
        assert_eq!(number(0.019971234), "0.019971234");
        assert_eq!(numbers(&[0.0, 0.42000000000000004]), "[0, 0.42]");
    }
}
