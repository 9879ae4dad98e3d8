//! Owns the tracker class, generated here rather than shipped: the Java side of cpu=times,
//! whose `enter`, `exit` and `unwind` the rewritten methods call, and which passes the
//! calls to the agent's natives while `engaged` is true.

use std::borrow::Cow;

use crate::bytes::put_u16;
use crate::class::{Attribute, ClassFile, Member};
use crate::code::write_code;
use crate::pool::Pool;

/// Internal name of the tracker class. It lives in `java.lang` (defined by the boot loader,
/// so it joins `java.base`), which every module reads and which exports it.
pub const TRACKER_CLASS: &str = "java/lang/HprofTracker";
/// The probe called at method entry.
pub const ENTER: &str = "enter";
/// The probe called before a return.
pub const EXIT: &str = "exit";
/// The probe called when an exception leaves a method.
pub const UNWIND: &str = "unwind";
/// The static boolean field that turns the probes on.
pub const ENGAGED: &str = "engaged";
/// Native method behind each probe, in the order enter, exit, unwind; each `(I)V`.
pub const NATIVES: [&str; 3] = ["nativeEnter", "nativeExit", "nativeUnwind"];

const ACC_PUBLIC: u16 = 0x0001;
const ACC_PRIVATE: u16 = 0x0002;
const ACC_STATIC: u16 = 0x0008;
const ACC_FINAL: u16 = 0x0010;
const ACC_SUPER: u16 = 0x0020;
const ACC_VOLATILE: u16 = 0x0040;
const ACC_NATIVE: u16 = 0x0100;

/// The class file of the tracker named `name` (normally [`TRACKER_CLASS`]):
///
/// ```text
/// public final class HprofTracker {
///     private static volatile boolean engaged;
///     public static void enter(int m)  { if (engaged) nativeEnter(m); }
///     public static void exit(int m)   { if (engaged) nativeExit(m); }
///     public static void unwind(int m) { if (engaged) nativeUnwind(m); }
///     private static native void nativeEnter(int m);  // and nativeExit, nativeUnwind
/// }
/// ```
pub fn tracker_class(name: &str) -> Vec<u8> {
    let mut pool = Pool::empty();
    let build = |pool: &mut Pool<'static>| -> crate::Result<Vec<u8>> {
        let this_class = pool.add_class(name.as_bytes())?;
        let super_class = pool.add_class(b"java/lang/Object")?;
        let code = pool.add_utf8(b"Code")?;
        let smt = pool.add_utf8(b"StackMapTable")?;
        let int_void = pool.add_utf8(b"(I)V")?;
        let engaged_name = pool.add_utf8(ENGAGED.as_bytes())?;
        let z = pool.add_utf8(b"Z")?;
        let engaged = pool.add_member(true, name.as_bytes(), ENGAGED.as_bytes(), b"Z")?;
        let mut methods = Vec::new();
        for (probe, native) in [ENTER, EXIT, UNWIND].into_iter().zip(NATIVES) {
            let target = pool.add_member(false, name.as_bytes(), native.as_bytes(), b"(I)V")?;
            // 0 getstatic engaged; 3 ifeq 10; 6 iload_0; 7 invokestatic native; 10 return
            let mut bytecode = vec![0xb2];
            put_u16(&mut bytecode, engaged);
            bytecode.extend_from_slice(&[0x99, 0x00, 0x07, 0x1a, 0xb8]);
            put_u16(&mut bytecode, target);
            bytecode.push(0xb1);
            // One same_frame at offset 10.
            let frames = Attribute {
                name: smt,
                data: Cow::Owned(vec![0, 1, 10]),
            };
            let body = write_code(1, 1, &bytecode, &[], &[frames]);
            methods.push(Member {
                access: ACC_PUBLIC | ACC_STATIC,
                name: pool.add_utf8(probe.as_bytes())?,
                descriptor: int_void,
                attributes: vec![Attribute {
                    name: code,
                    data: Cow::Owned(body),
                }],
            });
            methods.push(Member {
                access: ACC_PRIVATE | ACC_STATIC | ACC_NATIVE,
                name: pool.add_utf8(native.as_bytes())?,
                descriptor: int_void,
                attributes: Vec::new(),
            });
        }
        let class = ClassFile {
            minor: 0,
            major: 52,
            pool: pool.clone(),
            access: ACC_PUBLIC | ACC_FINAL | ACC_SUPER,
            this_class,
            super_class,
            interfaces: Vec::new(),
            fields: vec![Member {
                access: ACC_PRIVATE | ACC_STATIC | ACC_VOLATILE,
                name: engaged_name,
                descriptor: z,
                attributes: Vec::new(),
            }],
            methods,
            attributes: Vec::new(),
        };
        class.write()
    };
    build(&mut pool).expect("the tracker class fits its constant pool")
}
