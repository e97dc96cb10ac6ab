//! How a setting that resolves on its own comes from the value given: one
//! with a default is that value or the default; one without stays optional.

/// A resolved setting, made from the value a config or flag gave (`Given`).
pub(crate) trait Knob<Given>: Sized {
    /// The value `given`, or `default`.
    fn given_or(given: Option<Given>, default: Self) -> Self;
    /// The value as a config file gives it.
    fn as_given(&self) -> Option<Given>;
}

impl<T: Clone> Knob<T> for T {
    fn given_or(given: Option<T>, default: T) -> T {
        given.unwrap_or(default)
    }

    fn as_given(&self) -> Option<T> {
        Some(self.clone())
    }
}

impl<T: Clone> Knob<T> for Option<T> {
    fn given_or(given: Option<T>, default: Option<T>) -> Option<T> {
        given.or(default)
    }

    fn as_given(&self) -> Option<T> {
        self.clone()
    }
}
