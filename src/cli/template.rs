//! peat's minijinja templates' common ground: the environment its line-oriented templates
//! are written for, and JSON (what every `--json` prints) as template values.

use minijinja::{Environment, Value, syntax::SyntaxConfig};
use std::collections::BTreeMap;

/// An environment whose block tags take their own lines away (trim and lstrip) and keep
/// the template's last newline: what peat's line-oriented templates are written for.
pub(crate) fn line_environment() -> Environment<'static> {
    let mut env = Environment::new();
    if let Ok(syntax) = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env
}

/// A JSON value as a template value.
pub(crate) fn to_value(v: serde_json::Value) -> Value {
    use serde_json::Value as J;
    match v {
        J::Null => Value::from(()),
        J::Bool(b) => Value::from(b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64().unwrap_or_default()),
        },
        J::String(s) => Value::from(s),
        J::Array(a) => Value::from(a.into_iter().map(to_value).collect::<Vec<_>>()),
        J::Object(o) => Value::from(
            o.into_iter()
                .map(|(k, v)| (k, to_value(v)))
                .collect::<BTreeMap<String, Value>>(),
        ),
    }
}
