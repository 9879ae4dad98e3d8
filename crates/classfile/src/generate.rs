//! Owns the assembly of the classes the agent generates rather than ships (the cpu=times
//! tracker and its state class, heap=sites' counter class): a constant pool, fields, and
//! methods with code, StackMapTable frames and HotSpot's inlining annotation, written as one
//! class file; and the fields the agent adds to `java.lang.Thread` as it first loads.

use std::borrow::Cow;

use crate::class::{Attribute, ClassFile, Member};
use crate::code::write_code;
use crate::error::Result;
use crate::frames::{self, Frame};
use crate::pool::Pool;

/// `@ForceInline`: HotSpot inlines the method wherever it is called (honoured for boot
/// classes).
pub(crate) const FORCE_INLINE: &[u8] = b"Ljdk/internal/vm/annotation/ForceInline;";
/// `@DontInline`: HotSpot keeps the method out of line.
pub(crate) const DONT_INLINE: &[u8] = b"Ljdk/internal/vm/annotation/DontInline;";

/// A method's code as [`crate::asm::Asm::finish`] gives it, with its `max_stack` and
/// `max_locals`.
pub(crate) struct Body {
    /// The code and its frames.
    pub code: (Vec<u8>, Vec<Frame>),
    /// Operand stack words it needs.
    pub max_stack: u16,
    /// Local variable slots it needs, arguments included.
    pub max_locals: u16,
}

/// A method of a generated class.
pub(crate) struct Method<'a> {
    /// Access flags.
    pub access: u16,
    /// Name.
    pub name: Cow<'a, [u8]>,
    /// Descriptor.
    pub descriptor: &'a [u8],
    /// Its code; `None` for a native method.
    pub body: Option<Body>,
    /// HotSpot's inlining annotation it carries ([`FORCE_INLINE`], [`DONT_INLINE`]), if any.
    pub annotation: Option<&'a [u8]>,
}

/// A class under assembly.
pub(crate) struct Generated {
    pool: Pool<'static>,
    this_class: u16,
    super_class: u16,
    code_name: u16,
    frames_name: u16,
    annotations_name: u16,
    fields: Vec<Member<'static>>,
    methods: Vec<Member<'static>>,
}

impl Generated {
    /// An empty class `name` (internal name), a subclass of `java.lang.Object`.
    pub fn new(name: &[u8]) -> Result<Generated> {
        let mut pool = Pool::empty();
        let this_class = pool.add_class(name)?;
        let super_class = pool.add_class(b"java/lang/Object")?;
        let code_name = pool.add_utf8(b"Code")?;
        let frames_name = pool.add_utf8(b"StackMapTable")?;
        let annotations_name = pool.add_utf8(b"RuntimeVisibleAnnotations")?;
        Ok(Generated {
            pool,
            this_class,
            super_class,
            code_name,
            frames_name,
            annotations_name,
            fields: Vec::new(),
            methods: Vec::new(),
        })
    }

    /// The class's constant pool, for the constants its code uses.
    pub fn pool(&mut self) -> &mut Pool<'static> {
        &mut self.pool
    }

    /// Adds a field.
    pub fn field(&mut self, access: u16, name: &[u8], descriptor: &[u8]) -> Result<()> {
        let member = Member {
            access,
            name: self.pool.add_utf8(name)?,
            descriptor: self.pool.add_utf8(descriptor)?,
            attributes: Vec::new(),
        };
        self.fields.push(member);
        Ok(())
    }

    /// Adds a method.
    pub fn method(&mut self, method: Method<'_>) -> Result<()> {
        let mut attributes = Vec::new();
        if let Some(body) = method.body {
            let (code, frames) = body.code;
            let mut code_attrs = Vec::new();
            if !frames.is_empty() {
                code_attrs.push(Attribute {
                    name: self.frames_name,
                    data: Cow::Owned(frames::encode(&frames, &mut self.pool)?),
                });
            }
            attributes.push(Attribute {
                name: self.code_name,
                data: Cow::Owned(write_code(
                    body.max_stack,
                    body.max_locals,
                    &code,
                    &[],
                    &code_attrs,
                )),
            });
        }
        if let Some(annotation) = method.annotation {
            // One annotation, no element values.
            let mut data = vec![0, 1];
            data.extend_from_slice(&self.pool.add_utf8(annotation)?.to_be_bytes());
            data.extend_from_slice(&[0, 0]);
            attributes.push(Attribute {
                name: self.annotations_name,
                data: Cow::Owned(data),
            });
        }
        let member = Member {
            access: method.access,
            name: self.pool.add_utf8(&method.name)?,
            descriptor: self.pool.add_utf8(method.descriptor)?,
            attributes,
        };
        self.methods.push(member);
        Ok(())
    }

    /// The class file (version 52), with the class's access flags `access`.
    pub fn finish(self, access: u16) -> Result<Vec<u8>> {
        ClassFile {
            minor: 0,
            major: 52,
            pool: self.pool,
            access,
            this_class: self.this_class,
            super_class: self.super_class,
            interfaces: Vec::new(),
            fields: self.fields,
            methods: self.methods,
            attributes: Vec::new(),
        }
        .write()
    }
}

/// The pool's reference to `Thread.currentThread()`, or, with `carrier`, to
/// `Thread.currentCarrierThread()` (JDK 19 and later: a virtual thread's carrier), which the
/// generated classes key their per-thread data by.
pub(crate) fn current_thread(pool: &mut Pool<'_>, carrier: bool) -> Result<u16> {
    let name: &[u8] = if carrier {
        b"currentCarrierThread"
    } else {
        b"currentThread"
    };
    pool.add_member(false, b"java/lang/Thread", name, b"()Ljava/lang/Thread;")
}

/// `class` (a class file) with the fields of `fields` (access flags, name, descriptor) it does
/// not have yet added at the end; the same bytes if it has them all. The agent adds its
/// fields to `java.lang.Thread` this way: a class's fields cannot change once it is loaded.
pub(crate) fn with_fields(class: &[u8], fields: &[(u16, &str, &str)]) -> Result<Vec<u8>> {
    let mut cf = ClassFile::parse(class)?;
    let mut added = false;
    for &(access, name, descriptor) in fields {
        let mut has = false;
        for field in &cf.fields {
            has |= cf.pool.utf8(field.name)? == name.as_bytes();
        }
        if has {
            continue;
        }
        let member = Member {
            access,
            name: cf.pool.add_utf8(name.as_bytes())?,
            descriptor: cf.pool.add_utf8(descriptor.as_bytes())?,
            attributes: Vec::new(),
        };
        cf.fields.push(member);
        added = true;
    }
    if !added {
        return Ok(class.to_vec());
    }
    cf.write()
}
