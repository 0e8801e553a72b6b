//! Closed sets of named values (a backend, a precision, a solver, a
//! layout…): the one list of the names that the command line, the Python
//! package and config files accept, each with a line of help, parsed and
//! printed alike everywhere (`FromStr`, `Display`) without the library
//! knowing any of those doors.

use crate::error::InputError;

/// A closed set of named values.
pub trait Named: Copy + PartialEq + Send + Sync + 'static {
    /// What a value names, for errors: "backend".
    const WHAT: &'static str;
    /// Every value, in the order they are listed.
    const ALL: &'static [Self];
    /// Its name, as written on the command line and in files.
    fn name(self) -> &'static str;
    /// One line on what it means.
    fn help(self) -> &'static str;

    /// The value of `text`, one of the names; an error names what it is and
    /// lists them.
    fn parse_name(text: &str) -> Result<Self, InputError> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == text)
            .ok_or_else(|| {
                InputError::new(
                    Self::WHAT,
                    format!("'{text}'"),
                    format!("one of {}", names::<Self>()),
                )
            })
    }
}

/// Every name of `T`, comma-separated.
pub fn names<T: Named>() -> String {
    T::ALL
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `Display` and `FromStr` of a [`Named`] type, by its names.
macro_rules! display_and_parse_by_name {
    ($($t:ty),+ $(,)?) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::named::Named::name(*self))
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::error::InputError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                <$t as $crate::named::Named>::parse_name(text)
            }
        }
    )+};
}
pub(crate) use display_and_parse_by_name;
