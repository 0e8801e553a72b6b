//! The library's named values (`named::Named`): each parses what it
//! prints, refuses anything else with an error that names what it is and
//! lists the names, and the command line's flags take exactly those names.

use std::fmt::Debug;
use std::str::FromStr;

use clap::Parser;
use tether_sweep::cli::args::named;
use tether_sweep::engine::Backend;
use tether_sweep::error::InputError;
use tether_sweep::gpu::{GpuLayout, LayoutRequest, Precision};
use tether_sweep::io::track::TrackLayout;
use tether_sweep::named::{Named, names};
use tether_sweep::scenario::ScenarioKind;
use tether_sweep::solver::SolverKind;

/// A one-flag command line taking a `T`.
#[derive(Parser)]
struct Flag<T: Named + Clone> {
    #[arg(long, value_parser = named::<T>())]
    value: T,
}

fn round_trips<T>()
where
    T: Named + Clone + Debug + std::fmt::Display + FromStr<Err = InputError>,
{
    assert!(!T::ALL.is_empty());
    for &v in T::ALL {
        assert_eq!(v.to_string(), v.name());
        assert_eq!(v.name().parse::<T>().unwrap(), v);
        assert!(!v.help().is_empty(), "{v:?} has no help");
        let flag = Flag::<T>::try_parse_from(["x", "--value", v.name()]).unwrap();
        assert_eq!(flag.value, v);
    }
    let e = "no-such-value".parse::<T>().unwrap_err();
    assert_eq!(e.field, T::WHAT);
    assert_eq!(e.value, "'no-such-value'");
    assert_eq!(e.allowed, format!("one of {}", names::<T>()));
    // The flag refuses it too, listing the same names.
    let e = Flag::<T>::try_parse_from(["x", "--value", "no-such-value"])
        .err()
        .expect("refused")
        .to_string();
    let listed = T::ALL
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ");
    assert!(e.contains(&format!("[possible values: {listed}]")), "{e}");
}

#[test]
fn every_named_set_parses_what_it_prints_and_refuses_the_rest() {
    round_trips::<Backend>();
    round_trips::<Precision>();
    round_trips::<GpuLayout>();
    round_trips::<LayoutRequest>();
    round_trips::<SolverKind>();
    round_trips::<ScenarioKind>();
    round_trips::<TrackLayout>();
}

#[test]
fn a_wrong_name_says_what_it_is_and_what_is_allowed() {
    let e = "gpus".parse::<Backend>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid backend = 'gpus': must be one of auto, gpu, cpu"
    );
}
