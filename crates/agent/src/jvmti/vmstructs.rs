//! Reads HotSpot's exported description of its own structures (`gHotSpotVMStructs`, the table
//! the serviceability agent uses) to find a VM flag by name and set it: how the sampler turns
//! on `DebugNonSafepoints` without the cost of CompiledMethodLoad events.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};

use super::JavaVm;

/// The symbols of the table, looked up in libjvm.
struct Table {
    entries: *const u8,
    stride: usize,
    type_name: usize,
    field_name: usize,
    is_static: usize,
    offset: usize,
    address: usize,
}

/// A symbol of the library that holds the JVM's invocation interface.
fn symbol(vm: JavaVm, name: &CStr) -> Option<*const c_void> {
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
    let at = symbol(vm, name)? as *const u64;
    // SAFETY: HotSpot exports these entry-layout symbols as `uint64_t` globals, set when
    // libjvm is loaded.
    Some(unsafe { at.read() } as usize)
}

impl Table {
    fn find(vm: JavaVm) -> Option<Table> {
        let entries = symbol(vm, c"gHotSpotVMStructs")? as *const *const u8;
        // SAFETY: `gHotSpotVMStructs` is an exported pointer to the entry array.
        let entries = unsafe { entries.read() };
        if entries.is_null() {
            return None;
        }
        Some(Table {
            entries,
            stride: u64_symbol(vm, c"gHotSpotVMStructEntryArrayStride")?,
            type_name: u64_symbol(vm, c"gHotSpotVMStructEntryTypeNameOffset")?,
            field_name: u64_symbol(vm, c"gHotSpotVMStructEntryFieldNameOffset")?,
            is_static: u64_symbol(vm, c"gHotSpotVMStructEntryIsStaticOffset")?,
            offset: u64_symbol(vm, c"gHotSpotVMStructEntryOffsetOffset")?,
            address: u64_symbol(vm, c"gHotSpotVMStructEntryAddressOffset")?,
        })
        .filter(|t| t.stride > 0)
    }

    /// For the field `type_name::field_name`: its address if static, else its offset.
    fn field(&self, type_names: &[&str], field_name: &str) -> Option<(bool, usize)> {
        // The table ends with an entry whose type name is null; a bound guards the walk.
        for i in 0..100_000 {
            // SAFETY: entry i lies within the array until its terminating entry, which the
            // loop stops at; every field read is at an offset the VM exported for its layout.
            unsafe {
                let entry = self.entries.add(i * self.stride);
                let type_name = entry.add(self.type_name).cast::<*const c_char>().read();
                if type_name.is_null() {
                    return None;
                }
                let name = entry.add(self.field_name).cast::<*const c_char>().read();
                if name.is_null() {
                    continue;
                }
                let (ty, name) = (CStr::from_ptr(type_name), CStr::from_ptr(name));
                if name.to_bytes() != field_name.as_bytes()
                    || !type_names.iter().any(|t| ty.to_bytes() == t.as_bytes())
                {
                    continue;
                }
                let is_static = entry.add(self.is_static).cast::<i32>().read() != 0;
                return Some(if is_static {
                    (true, entry.add(self.address).cast::<usize>().read())
                } else {
                    (false, entry.add(self.offset).cast::<u64>().read() as usize)
                });
            }
        }
        None
    }
}

/// Sets the `bool` VM flag `name` (e.g. `DebugNonSafepoints`) to `value`, through HotSpot's
/// own flag table; an error says why it could not (another JVM, another layout).
pub fn set_bool_flag(vm: JavaVm, name: &str, value: bool) -> Result<(), String> {
    let table = Table::find(vm).ok_or("the JVM exports no gHotSpotVMStructs")?;
    // The flag class is `JVMFlag` since JDK 11 (`Flag` before).
    let types = ["JVMFlag", "Flag"];
    let missing = |what: &str| format!("gHotSpotVMStructs has no {what}");
    let (_, flags) = table
        .field(&types, "flags")
        .filter(|(s, _)| *s)
        .ok_or_else(|| missing("JVMFlag::flags"))?;
    let (_, count) = table
        .field(&types, "numFlags")
        .filter(|(s, _)| *s)
        .ok_or_else(|| missing("JVMFlag::numFlags"))?;
    let (_, name_at) = table
        .field(&types, "_name")
        .ok_or_else(|| missing("JVMFlag::_name"))?;
    let (_, addr_at) = table
        .field(&types, "_addr")
        .ok_or_else(|| missing("JVMFlag::_addr"))?;
    let size = type_size(vm, &types).ok_or_else(|| missing("the size of JVMFlag"))?;
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

/// The size of the type named one of `names`, from `gHotSpotVMTypes`.
fn type_size(vm: JavaVm, names: &[&str]) -> Option<usize> {
    let entries = symbol(vm, c"gHotSpotVMTypes")? as *const *const u8;
    let stride = u64_symbol(vm, c"gHotSpotVMTypeEntryArrayStride")?;
    let type_name = u64_symbol(vm, c"gHotSpotVMTypeEntryTypeNameOffset")?;
    let size = u64_symbol(vm, c"gHotSpotVMTypeEntrySizeOffset")?;
    if stride == 0 {
        return None;
    }
    // SAFETY: as for the struct table: walked up to its terminating entry (null type name),
    // with the exported layout offsets.
    unsafe {
        let entries = entries.read();
        if entries.is_null() {
            return None;
        }
        for i in 0..100_000 {
            let entry = entries.add(i * stride);
            let name = entry.add(type_name).cast::<*const c_char>().read();
            if name.is_null() {
                return None;
            }
            if names
                .iter()
                .any(|n| CStr::from_ptr(name).to_bytes() == n.as_bytes())
            {
                return Some(entry.add(size).cast::<u64>().read() as usize);
            }
        }
    }
    None
}
