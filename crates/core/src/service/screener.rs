//! The screener: the questions a participant answers before the first item, as a study sets
//! them or the default pair.

use natstudy_types::ScreenerQuestion;

/// The study's screener questions (the default screener when it sets none).
pub fn of(json: &str) -> Vec<ScreenerQuestion> {
    let screener: Vec<ScreenerQuestion> = serde_json::from_str(json).unwrap_or_default();
    if screener.is_empty() {
        default()
    } else {
        screener
    }
}

/// The screener of a study that sets none.
pub fn default() -> Vec<ScreenerQuestion> {
    let q = |name: &str, label: &str, options: &[&str]| ScreenerQuestion {
        name: name.into(),
        label: label.into(),
        options: options.iter().map(|o| o.to_string()).collect(),
        screen_out: Vec::new(),
    };
    vec![
        q(
            "years",
            "Years of Java experience",
            &["<1", "1-3", "3-5", "5-10", ">10"],
        ),
        q(
            "role",
            "Your role",
            &["student", "developer", "researcher", "other"],
        ),
    ]
}
