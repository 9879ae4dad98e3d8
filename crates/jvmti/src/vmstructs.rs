//! Reads HotSpot's exported description of its own structures (`gHotSpotVMStructs`,
//! `gHotSpotVMTypes`, `gHotSpotVMIntConstants`, `gHotSpotVMLongConstants`: the tables the
//! serviceability agent uses) into one snapshot: field offsets and static addresses by
//! `Type::field`, type sizes, constants. What the sampler's own stack walk learns HotSpot's
//! layout from, and how it turns on `DebugNonSafepoints` without the cost of
//! CompiledMethodLoad events.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};

use super::JavaVm;

/// One field of a HotSpot type, as the table describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// For a static field, its address; else its offset in the type.
    pub value: usize,
    /// Whether the field is static.
    pub is_static: bool,
    /// The field's C++ type, as HotSpot spells it (`int`, `int16_t`, `address`, ...).
    pub type_string: String,
}

/// A snapshot of HotSpot's exported tables.
#[derive(Debug, Default)]
pub struct VmStructs {
    fields: HashMap<(String, String), Field>,
    types: HashMap<String, usize>,
    ints: HashMap<String, i64>,
    longs: HashMap<String, i64>,
}

/// A symbol of the library that holds the JVM's invocation interface.
pub fn jvm_symbol(vm: JavaVm, name: &CStr) -> Option<*const c_void> {
    let raw = vm.raw();
    if raw.is_null() {
        return None;
    }
    // SAFETY: `raw` is the JVM's invocation interface; its function table holds code
    // addresses inside libjvm, which dladdr only looks up.
    let get_env = unsafe { (**raw).GetEnv }? as *const c_void;
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr fills `info` for an address inside a loaded library.
    if unsafe { libc::dladdr(get_env, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: the library is loaded already (RTLD_NOLOAD never loads one).
    let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: dlsym looks a NUL-terminated name up in a loaded library.
    let found = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!found.is_null()).then_some(found as *const c_void)
}

/// The `u64` an exported symbol holds.
fn u64_symbol(vm: JavaVm, name: &CStr) -> Option<usize> {
    let at = jvm_symbol(vm, name)? as *const u64;
    // SAFETY: HotSpot exports these entry-layout symbols as `uint64_t` globals, set when
    // libjvm is loaded.
    Some(unsafe { at.read() } as usize)
}

/// The entry array an exported pointer symbol points to.
fn array_symbol(vm: JavaVm, name: &CStr) -> Option<*const u8> {
    let at = jvm_symbol(vm, name)? as *const *const u8;
    // SAFETY: the `gHotSpotVM*` table symbols are exported pointers to their entry arrays.
    let entries = unsafe { at.read() };
    (!entries.is_null()).then_some(entries)
}

/// The string a table entry points to at `at` (None for a null pointer).
///
/// # Safety
/// `at` must be the address of a `const char*` in a live table entry.
unsafe fn string_at(at: *const u8) -> Option<String> {
    // SAFETY: as the caller promises; HotSpot's table strings are NUL-terminated literals.
    unsafe {
        let text = at.cast::<*const c_char>().read();
        (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
    }
}

/// At most this many entries are read from one table (each ends with a null entry; the
/// bound guards against a table without one).
const MAX_ENTRIES: usize = 100_000;

impl VmStructs {
    /// Reads the four tables of the JVM that runs this agent; an error says which is missing.
    pub fn read(vm: JavaVm) -> Result<VmStructs, String> {
        let mut tables = VmStructs::default();
        let missing = |what: &str| format!("the JVM exports no {what}");
        let entries =
            array_symbol(vm, c"gHotSpotVMStructs").ok_or_else(|| missing("gHotSpotVMStructs"))?;
        let stride = u64_symbol(vm, c"gHotSpotVMStructEntryArrayStride").unwrap_or(0);
        let type_name = u64_symbol(vm, c"gHotSpotVMStructEntryTypeNameOffset");
        let field_name = u64_symbol(vm, c"gHotSpotVMStructEntryFieldNameOffset");
        let type_string = u64_symbol(vm, c"gHotSpotVMStructEntryTypeStringOffset");
        let is_static = u64_symbol(vm, c"gHotSpotVMStructEntryIsStaticOffset");
        let offset = u64_symbol(vm, c"gHotSpotVMStructEntryOffsetOffset");
        let address = u64_symbol(vm, c"gHotSpotVMStructEntryAddressOffset");
        let (
            Some(type_name),
            Some(field_name),
            Some(type_string),
            Some(is_static),
            Some(offset),
            Some(address),
        ) = (
            type_name,
            field_name,
            type_string,
            is_static,
            offset,
            address,
        )
        else {
            return Err(missing("layout of gHotSpotVMStructs"));
        };
        if stride == 0 {
            return Err(missing("stride of gHotSpotVMStructs"));
        }
        for i in 0..MAX_ENTRIES {
            // SAFETY: entry i lies within the array until its terminating entry (null type
            // name), where the loop stops; every field is read at the offset the VM exported
            // for its own layout.
            unsafe {
                let entry = entries.add(i * stride);
                let Some(ty) = string_at(entry.add(type_name)) else {
                    break;
                };
                let Some(name) = string_at(entry.add(field_name)) else {
                    continue;
                };
                let is_static = entry.add(is_static).cast::<i32>().read() != 0;
                let value = if is_static {
                    entry.add(address).cast::<usize>().read()
                } else {
                    entry.add(offset).cast::<u64>().read() as usize
                };
                let type_string = string_at(entry.add(type_string)).unwrap_or_default();
                tables.fields.insert(
                    (ty, name),
                    Field {
                        value,
                        is_static,
                        type_string,
                    },
                );
            }
        }
        if let (Some(entries), Some(stride), Some(name), Some(size)) = (
            array_symbol(vm, c"gHotSpotVMTypes"),
            u64_symbol(vm, c"gHotSpotVMTypeEntryArrayStride"),
            u64_symbol(vm, c"gHotSpotVMTypeEntryTypeNameOffset"),
            u64_symbol(vm, c"gHotSpotVMTypeEntrySizeOffset"),
        ) && stride > 0
        {
            for i in 0..MAX_ENTRIES {
                // SAFETY: as above, up to the entry with a null type name.
                unsafe {
                    let entry = entries.add(i * stride);
                    let Some(ty) = string_at(entry.add(name)) else {
                        break;
                    };
                    let size = entry.add(size).cast::<u64>().read() as usize;
                    tables.types.insert(ty, size);
                }
            }
        }
        for (table, stride, name, value, long) in [
            (
                c"gHotSpotVMIntConstants",
                c"gHotSpotVMIntConstantEntryArrayStride",
                c"gHotSpotVMIntConstantEntryNameOffset",
                c"gHotSpotVMIntConstantEntryValueOffset",
                false,
            ),
            (
                c"gHotSpotVMLongConstants",
                c"gHotSpotVMLongConstantEntryArrayStride",
                c"gHotSpotVMLongConstantEntryNameOffset",
                c"gHotSpotVMLongConstantEntryValueOffset",
                true,
            ),
        ] {
            let (Some(entries), Some(stride), Some(name), Some(value)) = (
                array_symbol(vm, table),
                u64_symbol(vm, stride),
                u64_symbol(vm, name),
                u64_symbol(vm, value),
            ) else {
                continue;
            };
            if stride == 0 {
                continue;
            }
            for i in 0..MAX_ENTRIES {
                // SAFETY: as above, up to the entry with a null name.
                unsafe {
                    let entry = entries.add(i * stride);
                    let Some(constant) = string_at(entry.add(name)) else {
                        break;
                    };
                    if long {
                        let v = entry.add(value).cast::<i64>().read();
                        tables.longs.insert(constant, v);
                    } else {
                        let v = entry.add(value).cast::<i32>().read();
                        tables.ints.insert(constant, i64::from(v));
                    }
                }
            }
        }
        Ok(tables)
    }

    /// The field `field` of the first of `types` that has it.
    pub fn field(&self, types: &[&str], field: &str) -> Option<&Field> {
        types
            .iter()
            .find_map(|ty| self.fields.get(&((*ty).to_string(), field.to_string())))
    }

    /// The offset of the instance field `field` of the first of `types` that has it.
    pub fn offset(&self, types: &[&str], field: &str) -> Option<usize> {
        self.field(types, field)
            .filter(|f| !f.is_static)
            .map(|f| f.value)
    }

    /// The address of the static field `field` of the first of `types` that has it.
    pub fn address(&self, types: &[&str], field: &str) -> Option<usize> {
        self.field(types, field)
            .filter(|f| f.is_static && f.value != 0)
            .map(|f| f.value)
    }

    /// The size of the first of `types` the table describes.
    pub fn type_size(&self, types: &[&str]) -> Option<usize> {
        types.iter().find_map(|ty| self.types.get(*ty).copied())
    }

    /// An integer constant (`frame::entry_frame_call_wrapper_offset`).
    pub fn int_constant(&self, name: &str) -> Option<i64> {
        self.ints.get(name).copied()
    }

    /// A long constant.
    pub fn long_constant(&self, name: &str) -> Option<i64> {
        self.longs.get(name).copied()
    }
}

/// Sets the `bool` VM flag `name` (e.g. `DebugNonSafepoints`) to `value`, through HotSpot's
/// own flag table; an error says why it could not (another JVM, another layout).
pub fn set_bool_flag(vm: JavaVm, name: &str, value: bool) -> Result<(), String> {
    let tables = VmStructs::read(vm)?;
    // The flag class is `JVMFlag` since JDK 11 (`Flag` before).
    let types = ["JVMFlag", "Flag"];
    let missing = |what: &str| format!("gHotSpotVMStructs has no {what}");
    let flags = tables
        .address(&types, "flags")
        .ok_or_else(|| missing("JVMFlag::flags"))?;
    let count = tables
        .address(&types, "numFlags")
        .ok_or_else(|| missing("JVMFlag::numFlags"))?;
    let name_at = tables
        .offset(&types, "_name")
        .ok_or_else(|| missing("JVMFlag::_name"))?;
    let addr_at = tables
        .offset(&types, "_addr")
        .ok_or_else(|| missing("JVMFlag::_addr"))?;
    let size = tables
        .type_size(&types)
        .ok_or_else(|| missing("the size of JVMFlag"))?;
    // SAFETY: `flags` and `numFlags` are the addresses of HotSpot's static flag array pointer
    // and count; each flag lies `size` bytes after the previous one, and `_name` / `_addr` are
    // the exported offsets of its name and value pointers.
    unsafe {
        let array = (flags as *const *const u8).read();
        let count = (count as *const usize).read();
        if array.is_null() || count > 10_000 {
            return Err("HotSpot's flag table looks wrong".into());
        }
        for i in 0..count {
            let flag = array.add(i * size);
            let flag_name = flag.add(name_at).cast::<*const c_char>().read();
            if flag_name.is_null() || CStr::from_ptr(flag_name).to_bytes() != name.as_bytes() {
                continue;
            }
            let value_at = flag.add(addr_at).cast::<*mut bool>().read();
            if value_at.is_null() {
                return Err(format!("the flag {name} has no storage"));
            }
            value_at.write(value);
            return Ok(());
        }
    }
    Err(format!("the JVM has no flag {name}"))
}
