//! Java names from JVM signatures: `Ljava/util/HashMap$Node;` → `java.util.HashMap$Node`,
//! `[I` → `int[]`, `[[Ljava/lang/String;` → `java.lang.String[][]`, and method names as
//! `class.method` (the form `--domain com.example` matches).

/// The Java source name of a field-descriptor style class signature, as the type
/// classifier shows it. Anything unexpected is returned as it was given.
pub fn class_name(signature: &str) -> String {
    let dims = signature.bytes().take_while(|&b| b == b'[').count();
    let element = &signature[dims..];
    let base = match element.as_bytes().first() {
        Some(b'L') if element.ends_with(';') && element.len() >= 2 => {
            element[1..element.len() - 1].replace('/', ".")
        }
        Some(&c) if element.len() == 1 => match primitive(c) {
            Some(p) => p.to_owned(),
            None => return signature.to_owned(),
        },
        _ => return signature.to_owned(),
    };
    let mut name = base;
    for _ in 0..dims {
        name.push_str("[]");
    }
    name
}

fn primitive(c: u8) -> Option<&'static str> {
    Some(match c {
        b'Z' => "boolean",
        b'B' => "byte",
        b'C' => "char",
        b'S' => "short",
        b'I' => "int",
        b'J' => "long",
        b'F' => "float",
        b'D' => "double",
        b'V' => "void",
        _ => return None,
    })
}

/// The frame function name of `method` declared in the class with `class_signature`:
/// `com.example.Cache.lookup`, `java.util.HashMap.<init>`.
pub fn method_name(class_signature: &str, method: &str) -> String {
    format!("{}.{method}", class_name(class_signature))
}

/// The source line of bytecode index `location` from a line number table of
/// (first bytecode index, line) entries in any order; 0 when none covers it.
pub fn line_of(table: &[(i64, u32)], location: i64) -> u32 {
    if location < 0 {
        return 0;
    }
    table
        .iter()
        .filter(|(start, _)| *start <= location)
        .max_by_key(|(start, _)| *start)
        .map_or(0, |&(_, line)| line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_read_like_java_source() {
        assert_eq!(class_name("Ljava/lang/String;"), "java.lang.String");
        assert_eq!(
            class_name("Ljava/util/HashMap$Node;"),
            "java.util.HashMap$Node"
        );
        assert_eq!(class_name("[I"), "int[]");
        assert_eq!(class_name("[[B"), "byte[][]");
        assert_eq!(class_name("[Ljava/lang/String;"), "java.lang.String[]");
        assert_eq!(class_name("[[Ljava/lang/Object;"), "java.lang.Object[][]");
        // Odd input is kept as it is, never a panic.
        for odd in ["", "[", "L;", "Q", "[[", "Lfoo", "IJ"] {
            let _ = class_name(odd);
        }
        assert_eq!(class_name("Lfoo"), "Lfoo");
        assert_eq!(class_name("L;"), "");
    }

    #[test]
    fn method_names_join_class_and_method() {
        assert_eq!(
            method_name("Lcom/example/Cache;", "lookup"),
            "com.example.Cache.lookup"
        );
        assert_eq!(
            method_name("Ljava/util/HashMap;", "<init>"),
            "java.util.HashMap.<init>"
        );
    }

    #[test]
    fn lines_come_from_the_last_entry_at_or_before_the_bci() {
        let table = [(10, 7), (0, 5), (4, 6)];
        assert_eq!(line_of(&table, 0), 5);
        assert_eq!(line_of(&table, 3), 5);
        assert_eq!(line_of(&table, 4), 6);
        assert_eq!(line_of(&table, 99), 7);
        assert_eq!(line_of(&table, -1), 0);
        assert_eq!(line_of(&[], 3), 0);
    }
}
