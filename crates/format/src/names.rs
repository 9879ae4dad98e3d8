//! Owns the conversion of JVM class names into the Java source names HPROF text uses.

use crate::types::BasicType;

/// Turns a class name as found in a file into its Java source form.
///
/// `java/lang/String` becomes `java.lang.String`, `[I` becomes `int[]` and
/// `[[Ljava/lang/String;` becomes `java.lang.String[][]`. Names already in
/// source form (`java.lang.String`, `char[]`) come back unchanged.
pub fn java_class_name(name: &str) -> String {
    let dims = name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return name.replace('/', ".");
    }
    let element = &name[dims..];
    let base = match element.as_bytes() {
        [b'L', inner @ .., b';'] => String::from_utf8_lossy(inner).replace('/', "."),
        [code] => match descriptor_type(*code) {
            Some(ty) => ty.java_name().to_string(),
            None => return name.replace('/', "."),
        },
        _ => return name.replace('/', "."),
    };
    let mut out = base;
    for _ in 0..dims {
        out.push_str("[]");
    }
    out
}

/// A class or method name without what changes from one run of a program to the next: the
/// address of a hidden class (`LambdaForm$MH+0x00007f7cac002000`, `Main$$Lambda/0x0000000800c03000`)
/// and a lambda class's number (`Main$$Lambda$14`). Names of two runs compare equal through it.
pub fn stable_class_name(name: &str) -> std::borrow::Cow<'_, str> {
    let bytes = name.as_bytes();
    let hidden = |i: usize| {
        (bytes[i] == b'+' || bytes[i] == b'/')
            && bytes.get(i + 1) == Some(&b'0')
            && bytes.get(i + 2) == Some(&b'x')
            && bytes.get(i + 3).is_some_and(u8::is_ascii_hexdigit)
    };
    let lambda = |i: usize| {
        name[i..].starts_with("$$Lambda$") && bytes.get(i + 9).is_some_and(u8::is_ascii_digit)
    };
    if !(0..bytes.len()).any(|i| hidden(i) || lambda(i)) {
        return name.into();
    }
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < bytes.len() {
        if hidden(i) {
            i += 3;
            while bytes.get(i).is_some_and(u8::is_ascii_hexdigit) {
                i += 1;
            }
        } else if lambda(i) {
            out.push_str("$$Lambda");
            i += 9;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        } else {
            let c = name[i..].chars().next().unwrap_or('?');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out.into()
}

/// The basic type for a JVM descriptor character (`I`, `Z`, …), except references.
fn descriptor_type(code: u8) -> Option<BasicType> {
    Some(match code {
        b'Z' => BasicType::Boolean,
        b'C' => BasicType::Char,
        b'F' => BasicType::Float,
        b'D' => BasicType::Double,
        b'B' => BasicType::Byte,
        b'S' => BasicType::Short,
        b'I' => BasicType::Int,
        b'J' => BasicType::Long,
        _ => return None,
    })
}

/// The Java source name of an array of `element` with one dimension: `int[]`.
pub fn primitive_array_name(element: BasicType) -> String {
    format!("{}[]", element.java_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_jvm_names() {
        assert_eq!(java_class_name("java/lang/String"), "java.lang.String");
        assert_eq!(java_class_name("[I"), "int[]");
        assert_eq!(java_class_name("[[J"), "long[][]");
        assert_eq!(
            java_class_name("[[Ljava/lang/String;"),
            "java.lang.String[][]"
        );
        assert_eq!(java_class_name("[Ljava.lang.Object;"), "java.lang.Object[]");
        assert_eq!(java_class_name("java.lang.String[]"), "java.lang.String[]");
        assert_eq!(java_class_name("char[]"), "char[]");
        assert_eq!(java_class_name("Foo$Bar"), "Foo$Bar");
        assert_eq!(java_class_name("[Q"), "[Q");
        assert_eq!(primitive_array_name(BasicType::Byte), "byte[]");
    }

    #[test]
    fn stable_names_drop_hidden_class_addresses_and_lambda_numbers() {
        for (name, stable) in [
            (
                "java.lang.invoke.LambdaForm$MH+0x00007f7cac002000",
                "java.lang.invoke.LambdaForm$MH",
            ),
            ("Main$$Lambda$14/0x0000000800c03000.run", "Main$$Lambda.run"),
            ("Main$$Lambda+0x0000000800c03000[]", "Main$$Lambda[]"),
            ("Main$$Lambda$7.run", "Main$$Lambda.run"),
            ("java.util.HashMap$Node", "java.util.HashMap$Node"),
            ("a/0xnothex", "a/0xnothex"),
        ] {
            assert_eq!(stable_class_name(name), stable, "{name}");
        }
        assert!(matches!(
            stable_class_name("java.lang.String"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
