//! A number's range, checked by the flag's parser: the same check for a
//! flag and for a config file's key, with the flag and range named.

use std::fmt::Display;
use std::str::FromStr;

/// A parser of numbers in `low..=high`, for `#[arg(value_parser = …)]`.
pub fn within<T>(low: T, high: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: FromStr + PartialOrd + Display + Copy + Send + Sync + 'static,
    T::Err: Display,
{
    move |text: &str| {
        let value: T = text.trim().parse().map_err(|e| format!("{e}"))?;
        autoeval_models::in_range(value, (low, high))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_range_keeps_its_fraction() {
        let parse = within(0.0_f64, 2.0);
        assert_eq!(parse("0.25"), Ok(0.25));
        assert!(parse("2.5").unwrap_err().contains("0..=2"));
        let count = within(1_u32, 100);
        assert!(count("0").unwrap_err().contains("1..=100"));
        assert!(count("five").is_err());
    }
}
