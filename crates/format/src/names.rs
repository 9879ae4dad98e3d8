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
}
