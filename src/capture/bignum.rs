//! JSON numbers past what a double holds (`1e999999` in a tool's structured result): such
//! a number fails the whole line in serde_json, and with it everything else the line says
//! (a prompt beside the tool result). The line is parsed again with each such number
//! turned into a string of its own digits. Only a line that failed this way pays for it.

use serde_json::Value;

/// At most this many numbers are rewritten in one line (each costs a re-parse).
const MAX_REWRITES: usize = 16;

/// `text` parsed as JSON, each out-of-range number kept as its text; `None` when it does
/// not parse for any other reason.
pub(crate) fn parse(text: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Some(v),
        Err(e) if out_of_range(&e) => parse_keeping_text(text, &e),
        Err(_) => None,
    }
}

/// Whether `e` is serde_json's out-of-range number error.
fn out_of_range(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("number out of range")
}

/// Parse `text`, which failed with `first` (an out-of-range number), keeping every
/// out-of-range number as the text of its digits. `None` when it still does not parse.
fn parse_keeping_text(text: &str, first: &serde_json::Error) -> Option<Value> {
    let mut line = text.to_string();
    let mut err = (first.line(), first.column());
    for _ in 0..MAX_REWRITES {
        line = quote_number_at(&line, err)?;
        match serde_json::from_str::<Value>(&line) {
            Ok(v) => return Some(v),
            Err(e) if out_of_range(&e) => err = (e.line(), e.column()),
            Err(_) => return None,
        }
    }
    None
}

/// `line` with the number token around the error position `(line, column)` (1-based,
/// in bytes, as serde_json reports it) wrapped in quotes.
fn quote_number_at(text: &str, (line, column): (usize, usize)) -> Option<String> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let bytes = text.as_bytes();
    let at = (line_start + column)
        .checked_sub(1)?
        .min(bytes.len().checked_sub(1)?);
    let numeric = |b: u8| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E');
    if !numeric(bytes[at]) {
        return None;
    }
    let start = (0..=at).rev().take_while(|&i| numeric(bytes[i])).last()?;
    let end = (at..bytes.len())
        .take_while(|&i| numeric(bytes[i]))
        .last()?
        + 1;
    if !(bytes[start].is_ascii_digit() || bytes[start] == b'-') {
        return None;
    }
    Some(format!(
        "{}\"{}\"{}",
        &text[..start],
        &text[start..end],
        &text[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_out_of_range_number_is_kept_as_its_text() {
        assert_eq!(
            parse(r#"{"type":"user","r":{"ratio":1e999999},"text":"keep me"}"#),
            Some(json!({"type":"user","r":{"ratio":"1e999999"},"text":"keep me"}))
        );
    }

    #[test]
    fn several_out_of_range_numbers_in_arrays_and_signs_are_all_kept() {
        assert_eq!(
            parse(r#"{"a":[1,-1e400,2.5E+999],"b":1.5e309,"c":"é","d":7}"#),
            Some(json!({"a":[1,"-1e400","2.5E+999"],"b":"1.5e309","c":"é","d":7}))
        );
        // A big number after multi-byte text: serde_json's column counts bytes.
        assert_eq!(
            parse(r#"{"s":"ünïcødé 😀","n":9e9999}"#),
            Some(json!({"s":"ünïcødé 😀","n":"9e9999"}))
        );
    }

    #[test]
    fn numbers_a_double_holds_and_other_errors_are_untouched() {
        assert_eq!(parse(r#"{"n":1e308}"#), Some(json!({"n":1e308})));
        assert_eq!(parse(r#"{"n":1e999999,"#), None, "still truncated");
        assert_eq!(parse(r#"{"n":tru}"#), None);
        let many: Vec<String> = (0..MAX_REWRITES + 1).map(|_| "1e999".to_string()).collect();
        assert_eq!(parse(&format!("{{\"a\":[{}]}}", many.join(","))), None);
    }
}
