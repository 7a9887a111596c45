//! A TOML table read and written by dotted key (`results.ttl_secs`): the config is checked,
//! screened and layered one key at a time, and these two walks serve every one of those steps.

use toml::{Table, Value};

/// The value at a dotted key, if every part of it is there.
pub(super) fn get<'a>(table: &'a Table, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut cur = table.get(parts.next()?)?;
    for part in parts {
        cur = cur.as_table()?.get(part)?;
    }
    Some(cur)
}

/// Sets a dotted key, making the tables on its way; a part already holding a non-table value is
/// left alone and nothing is set.
pub(super) fn set(table: &mut Table, dotted: &str, value: Value) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut t = table;
    for part in parts {
        let entry = t.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(inner) = entry else { return };
        t = inner;
    }
    t.insert(last.to_string(), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_key_reads_back_and_a_scalar_in_the_way_stops_it() {
        let mut t = Table::new();
        set(&mut t, "results.ttl_secs", Value::Integer(60));
        assert_eq!(get(&t, "results.ttl_secs"), Some(&Value::Integer(60)));
        assert!(get(&t, "results.missing").is_none() && get(&t, "results.ttl_secs.deeper").is_none());
        set(&mut t, "results.ttl_secs.deeper", Value::Integer(1));
        assert_eq!(get(&t, "results.ttl_secs"), Some(&Value::Integer(60)), "a scalar is not replaced by a table");
    }
}
