//! An axis's arithmetic that every figure kind shares: values in units of a power of ten, and
//! ends that plotters can put ticks between in bounded time, whatever the data.

/// `x` in units of `10^exponent`, the power divided in two steps so that neither factor over-
/// or underflows (`10^-320` alone is a subnormal that `powi` rounds to zero).
pub fn in_units(x: f64, exponent: i32) -> f64 {
    let half = exponent / 2;
    x * 10f64.powi(-half) * 10f64.powi(-(exponent - half))
}

/// An axis range plotters can put ticks on in bounded time: finite, increasing, and wider than
/// a billionth of its ends' magnitude (plotters steps from end to end by its tick spacing: a
/// spacing below the ends' precision never reaches the far end). A range that is not is
/// widened about its middle; on data that are never negative (`non_negative`) it starts at
/// zero or above.
pub fn tickable(bottom: f64, top: f64, non_negative: bool) -> (f64, f64) {
    let magnitude = bottom.abs().max(top.abs());
    let fine = bottom.is_finite()
        && top.is_finite()
        && top > bottom
        && top - bottom > magnitude * 1e-9
        && (top - bottom).is_normal();
    if fine {
        return (bottom, top);
    }
    let middle = if bottom.is_finite() && top.is_finite() {
        bottom / 2.0 + top / 2.0
    } else {
        0.0
    };
    let pad = (middle.abs() * 0.05).max(0.5);
    let low = middle - pad;
    let low = if non_negative { low.max(0.0) } else { low };
    (low, middle + pad)
}
