//! Owns the fast skipping of flat values in compressed chunks: a class whose fields are
//! LEB128 integers and single bytes, with at most arrays of objects made of LEB128 integers
//! alone (a stack trace: a flag, then its frames), is skipped by counting the bytes that end
//! an integer instead of decoding each value.

use crate::cursor::Cursor;
use crate::metadata::{FieldType, Metadata};

/// One step of skipping a flat value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// This many LEB128 integers.
    Integers(u32),
    /// This many single bytes.
    Bytes(u32),
    /// An array (a LEB128 count) of objects of this many LEB128 integers each.
    Array(u32),
}

/// How a value of each class is skipped fast; `None` for a class that is not flat.
pub(crate) type Plans = Vec<Option<Box<[Step]>>>;

/// The plans of every class of `meta`, for a compressed chunk.
pub(crate) fn plans(meta: &Metadata, string_class: Option<u32>) -> Plans {
    (0..meta.classes.len() as u32)
        .map(|class| {
            (Some(class) != string_class)
                .then(|| plan(meta, class))
                .flatten()
        })
        .collect()
}

/// The number of LEB128 integers an object of `class` is, when it is only those.
fn integers_only(meta: &Metadata, class: u32) -> Option<u32> {
    let fields = &meta.class(class).fields;
    fields
        .iter()
        .all(|f| !f.array && is_integer(f.ty))
        .then_some(fields.len() as u32)
}

/// Whether a compressed chunk writes a value of `ty` as one LEB128 integer.
fn is_integer(ty: FieldType) -> bool {
    matches!(
        ty,
        FieldType::Char | FieldType::Short | FieldType::Int | FieldType::Long | FieldType::Ref(_)
    )
}

fn plan(meta: &Metadata, class: u32) -> Option<Box<[Step]>> {
    let mut steps: Vec<Step> = Vec::new();
    for field in &meta.class(class).fields {
        let step = match field.ty {
            FieldType::Inline(item) if field.array => Step::Array(integers_only(meta, item)?),
            _ if field.array => return None,
            FieldType::Boolean | FieldType::Byte => Step::Bytes(1),
            ty if is_integer(ty) => Step::Integers(1),
            _ => return None,
        };
        match (steps.last_mut(), step) {
            (Some(Step::Integers(n)), Step::Integers(m))
            | (Some(Step::Bytes(n)), Step::Bytes(m)) => *n += m,
            _ => steps.push(step),
        }
    }
    Some(steps.into_boxed_slice())
}

/// Skips a value by its plan; `None` (the cursor where it was) where the bytes do not hold
/// it whole, for the strict skip to find and name the damage.
pub(crate) fn skip(c: &mut Cursor<'_>, steps: &[Step]) -> Option<()> {
    let start = c.pos();
    let done = steps.iter().try_for_each(|&step| match step {
        Step::Integers(n) => c.skip_integers(n as usize),
        Step::Bytes(n) => c.skip(n as usize, "byte").ok(),
        Step::Array(width) => {
            let n = c.count(width.max(1) as usize, "array").ok()?;
            c.skip_integers(n.checked_mul(width as usize)?)
        }
    });
    if done.is_none() {
        c.set_pos(start);
    }
    done
}
