//! The JVMTI heap walk, the fallback when the JVM's dumper can't be reached or fails: the
//! classes' layouts (fields and their JVMTI indices), the walk's visitor (`DumpVisitor`), which
//! assembles each object and writes it as a heap dump record as FollowReferences goes, the
//! values of primitive fields, and the check that the walk would not crash this JVM.

use std::collections::HashSet;

use rustc_hash::FxHashMap as HashMap;
use std::io;
use std::sync::Arc;

use hprof_format::{BasicType, HeapRecord, IdList, IdSize, Value};

use crate::engine::Context;
use crate::engine::heap_dump::HeapDump;
use crate::error::{ErrorKind, report};
use crate::jvmti::walk::{HeapVisitor, ReferenceKind, TagUpdate};
use crate::jvmti::{Jni, Jvmti};
use crate::output::{HeapName, ProfileOutput, ProfileWriter};
use crate::trace_store::{ClassInfo, EMPTY_TRACE_SERIAL};

/// Tag bit set on objects already written.
const DUMPED: i64 = 1 << 62;
const ID_MASK: i64 = !(DUMPED);

/// Where a field's value goes.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// At this offset of an instance's values.
    Instance { offset: usize },
    /// The n-th static field declared by the class.
    Static { position: usize },
}

/// What the dump needs to know of a class.
#[derive(Debug)]
struct ClassLayout {
    info: Arc<ClassInfo>,
    super_id: u64,
    /// Element type for a primitive array class, `Object` for an object array class.
    array_of: Option<BasicType>,
    instance_fields: Vec<(String, BasicType)>,
    static_fields: Vec<(String, BasicType)>,
    slots: HashMap<i32, Slot>,
    values_len: usize,
}

/// References a class holds, gathered during the walk.
#[derive(Debug, Default)]
struct ClassExtras {
    statics: HashMap<usize, Value>,
    loader: u64,
    signers: u64,
    domain: u64,
    constant_pool: Vec<(u16, Value)>,
}

fn basic_type(signature: &str) -> BasicType {
    match signature.as_bytes().first() {
        Some(b'Z') => BasicType::Boolean,
        Some(b'C') => BasicType::Char,
        Some(b'F') => BasicType::Float,
        Some(b'D') => BasicType::Double,
        Some(b'B') => BasicType::Byte,
        Some(b'S') => BasicType::Short,
        Some(b'I') => BasicType::Int,
        Some(b'J') => BasicType::Long,
        _ => BasicType::Object,
    }
}

fn primitive_type(code: u8) -> BasicType {
    basic_type(std::str::from_utf8(&[code]).unwrap_or("L"))
}

/// Raw fields of one class, before layouts are computed.
struct RawClass {
    info: Arc<ClassInfo>,
    super_id: u64,
    interface_ids: Vec<u64>,
    is_interface: bool,
    /// (name, type, is_static), in GetClassFields order.
    fields: Vec<(String, BasicType, bool)>,
}

impl HeapDump {
    fn collect_classes(ctx: &Context, jni: Jni) -> HashMap<u64, RawClass> {
        let jvmti = ctx.jvmti;
        let mut raw = HashMap::default();
        let Ok(classes) = jvmti.loaded_classes() else {
            return raw;
        };
        let mut traces = match ctx.traces.lock() {
            Ok(t) => t,
            Err(_) => return raw,
        };
        for class in classes {
            let info = traces.class_info(jvmti, &ctx.ids, class);
            let super_id = match jni.superclass(class) {
                Some(s) => {
                    let id = ctx.ids.of(jvmti, s);
                    jni.delete_local_ref(s);
                    id
                }
                None => 0,
            };
            let interface_ids = jvmti
                .interfaces(class)
                .unwrap_or_default()
                .into_iter()
                .map(|i| {
                    let id = ctx.ids.of(jvmti, i);
                    jni.delete_local_ref(i);
                    id
                })
                .collect();
            let fields = jvmti
                .class_fields(class)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| {
                    let (name, sig) = jvmti.field_name(class, f).ok()?;
                    let modifiers = jvmti.field_modifiers(class, f).ok()?;
                    Some((name, basic_type(&sig), modifiers & 0x8 != 0))
                })
                .collect();
            let is_interface = jvmti.is_interface(class).unwrap_or(false);
            raw.insert(
                info.object_id,
                RawClass {
                    info,
                    super_id,
                    interface_ids,
                    is_interface,
                    fields,
                },
            );
            jni.delete_local_ref(class);
        }
        raw
    }

    /// Computes each class's layout, and the JVMTI field indices of its fields: the fields of
    /// every interface it implements come first (counted, not listed), then the fields of
    /// java.lang.Object, ..., then its own, each class's in GetClassFields order.
    fn layouts(raw: &HashMap<u64, RawClass>) -> HashMap<u64, ClassLayout> {
        let chain = |id: u64| -> Vec<&RawClass> {
            let mut out = Vec::new();
            let mut next = id;
            while let Some(c) = raw.get(&next) {
                out.push(c);
                if c.super_id == 0 || out.len() > 4096 {
                    break;
                }
                next = c.super_id;
            }
            out
        };
        let interface_fields = |start: &[u64]| -> usize {
            let mut seen = HashSet::new();
            let mut stack: Vec<u64> = start.to_vec();
            let mut count = 0;
            while let Some(id) = stack.pop() {
                if !seen.insert(id) {
                    continue;
                }
                if let Some(i) = raw.get(&id) {
                    count += i.fields.len();
                    stack.extend(&i.interface_ids);
                }
            }
            count
        };
        let mut layouts = HashMap::default();
        for (&id, class) in raw {
            let levels = chain(id); // class first, java.lang.Object last
            let mut slots = HashMap::default();
            // Instance values: own fields first, then the superclass's, and so on.
            let mut offsets: HashMap<(u64, usize), usize> = HashMap::default();
            let mut values_len = 0;
            for level in &levels {
                for (position, (_, ty, is_static)) in level.fields.iter().enumerate() {
                    if !is_static {
                        offsets.insert((level.info.object_id, position), values_len);
                        values_len += ty.size(IdSize::Eight);
                    }
                }
            }
            let (first_index, counted): (usize, Vec<&RawClass>) = if class.is_interface {
                (interface_fields(&class.interface_ids), vec![class])
            } else {
                let all: Vec<u64> = levels
                    .iter()
                    .flat_map(|l| l.interface_ids.iter().copied())
                    .collect();
                (
                    interface_fields(&all),
                    levels.iter().rev().copied().collect(),
                )
            };
            let mut index = first_index as i32;
            let mut own_static = 0;
            for level in counted {
                for (position, (_, _, is_static)) in level.fields.iter().enumerate() {
                    if *is_static {
                        if level.info.object_id == id {
                            slots.insert(
                                index,
                                Slot::Static {
                                    position: own_static,
                                },
                            );
                            own_static += 1;
                        }
                    } else if let Some(&offset) = offsets.get(&(level.info.object_id, position)) {
                        slots.insert(index, Slot::Instance { offset });
                    }
                    index += 1;
                }
            }
            let name = &class.info.name;
            let array_of = name.strip_suffix("[]").map(|element| match element {
                "boolean" => BasicType::Boolean,
                "char" => BasicType::Char,
                "float" => BasicType::Float,
                "double" => BasicType::Double,
                "byte" => BasicType::Byte,
                "short" => BasicType::Short,
                "int" => BasicType::Int,
                "long" => BasicType::Long,
                _ => BasicType::Object,
            });
            layouts.insert(
                id,
                ClassLayout {
                    info: class.info.clone(),
                    super_id: class.super_id,
                    array_of,
                    instance_fields: class
                        .fields
                        .iter()
                        .filter(|f| !f.2)
                        .map(|f| (f.0.clone(), f.1))
                        .collect(),
                    static_fields: class
                        .fields
                        .iter()
                        .filter(|f| f.2)
                        .map(|f| (f.0.clone(), f.1))
                        .collect(),
                    slots,
                    values_len,
                },
            );
        }
        layouts
    }

    /// The JVMTI heap walk: a full GC, then every reachable object, streamed to the output.
    pub(super) fn walk(ctx: &Context, jni: Jni, out: &mut ProfileOutput) {
        let _progress = crate::progress::Phase::start(
            "writing the heap dump (JVMTI heap walk)",
            "heap dump written",
            None,
        );
        let _ = ctx.jvmti.force_garbage_collection();
        if let Some(reason) = walk_would_crash(ctx, jni) {
            let note = format!("heap dump skipped: {reason}");
            report(ErrorKind::Dump, &note);
            out.note_incomplete(&note);
            return;
        }
        let raw = jni.with_local_frame(64, || HeapDump::collect_classes(ctx, jni));
        let layouts = HeapDump::layouts(&raw);
        drop(raw);
        let Ok(walk_env) = Jvmti::new_tagging_env(ctx.vm) else {
            report(
                ErrorKind::Dump,
                "can't get a JVMTI environment for the heap dump",
            );
            return;
        };
        // Classes and threads keep the ids they have everywhere else in the output.
        let mut thread_serials = HashMap::default();
        jni.with_local_frame(64, || {
            if let Ok(classes) = ctx.jvmti.loaded_classes() {
                for class in classes {
                    let _ = walk_env.set_tag(class, ctx.ids.of(ctx.jvmti, class) as i64);
                    jni.delete_local_ref(class);
                }
            }
        });
        if let Ok(threads) = ctx.threads.lock() {
            for t in threads.live() {
                let _ = walk_env.set_tag(t.thread.get(), t.object_id as i64);
                thread_serials.insert(t.object_id, t.serial);
            }
        }
        out.write(|w| {
            // Every name the CLASS DUMPs use is written before the dump opens.
            let mut names: HashMap<&str, u64> = HashMap::default();
            for layout in layouts.values() {
                w.heap_class(&layout.info)?;
                w.heap_class_layout(&layout.info, layout.super_id, &layout.instance_fields)?;
                for (name, _) in layout.static_fields.iter().chain(&layout.instance_fields) {
                    if !names.contains_key(name.as_str()) {
                        let id = w.heap_string(name)?;
                        names.insert(name, id);
                    }
                }
            }
            fn named<'n>(names: &HashMap<&str, u64>, text: &'n str) -> HeapName<'n> {
                HeapName {
                    id: names.get(text).copied().unwrap_or(0),
                    text,
                }
            }
            w.heap_dump_begin()?;
            let mut visitor = DumpVisitor {
                ctx,
                writer: w,
                layouts: &layouts,
                extras: HashMap::default(),
                array_lengths: HashMap::default(),
                thread_serials,
                current: None,
                global_refs: 0,
                error: None,
            };
            let walked = walk_env.follow_references(&mut visitor);
            visitor.flush();
            if let Some(e) = visitor.error.take() {
                return Err(e);
            }
            if let Err(e) = walked {
                report(ErrorKind::Dump, format!("the heap walk failed ({e})"));
            }
            let extras = std::mem::take(&mut visitor.extras);
            for (&id, layout) in &layouts {
                let extra = extras.get(&id);
                let statics: Vec<(HeapName<'_>, Value)> = layout
                    .static_fields
                    .iter()
                    .enumerate()
                    .map(|(position, (name, ty))| {
                        let value = extra
                            .and_then(|e| e.statics.get(&position))
                            .copied()
                            .unwrap_or(zero(*ty));
                        (named(&names, name), value)
                    })
                    .collect();
                let fields: Vec<(HeapName<'_>, BasicType)> = layout
                    .instance_fields
                    .iter()
                    .map(|(name, ty)| (named(&names, name), *ty))
                    .collect();
                let constant_pool: &[(u16, Value)] = extra.map_or(&[], |e| &e.constant_pool);
                w.heap_class_dump(
                    id,
                    layout.super_id,
                    extra.map_or(0, |e| e.loader),
                    extra.map_or(0, |e| e.signers),
                    extra.map_or(0, |e| e.domain),
                    layout.values_len as u32,
                    constant_pool,
                    &statics,
                    &fields,
                )?;
            }
            w.heap_dump_end()
        });
        walk_env.dispose();
    }
}

/// The object being assembled.
enum Current {
    Instance {
        id: u64,
        class_id: u64,
        values: Vec<u8>,
    },
    ObjectArray {
        id: u64,
        class_id: u64,
        elements: Vec<u64>,
    },
}

/// The walk's state; writes records as the walk goes.
struct DumpVisitor<'a> {
    ctx: &'a Context,
    writer: &'a mut dyn ProfileWriter,
    layouts: &'a HashMap<u64, ClassLayout>,
    extras: HashMap<u64, ClassExtras>,
    array_lengths: HashMap<u64, u32>,
    thread_serials: HashMap<u64, u32>,
    current: Option<Current>,
    global_refs: u64,
    error: Option<io::Error>,
}

impl DumpVisitor<'_> {
    fn record(&mut self, record: &HeapRecord<'_>) {
        if self.error.is_none()
            && let Err(e) = self.writer.heap_record(record)
        {
            self.error = Some(e);
        }
    }

    fn flush(&mut self) {
        match self.current.take() {
            Some(Current::Instance {
                id,
                class_id,
                values,
            }) => self.record(&HeapRecord::InstanceDump {
                object_id: id,
                stack_trace_serial: EMPTY_TRACE_SERIAL,
                class_id,
                values: &values,
            }),
            Some(Current::ObjectArray {
                id,
                class_id,
                elements,
            }) => {
                let bytes: Vec<u8> = elements.iter().flat_map(|e| e.to_be_bytes()).collect();
                if let Some(list) = IdList::new(&bytes, IdSize::Eight) {
                    self.record(&HeapRecord::ObjectArrayDump {
                        array_id: id,
                        stack_trace_serial: EMPTY_TRACE_SERIAL,
                        array_class_id: class_id,
                        elements: list,
                    });
                }
            }
            None => {}
        }
    }

    /// Makes `id` (of class `class_id`) the object being assembled.
    fn select(&mut self, id: u64, class_id: u64) {
        let same = match &self.current {
            Some(Current::Instance { id: c, .. } | Current::ObjectArray { id: c, .. }) => *c == id,
            None => false,
        };
        if same {
            return;
        }
        self.flush();
        let layout = self.layouts.get(&class_id);
        self.current = match layout.and_then(|l| l.array_of) {
            Some(BasicType::Object) => {
                let length = self.array_lengths.remove(&id).unwrap_or(0) as usize;
                Some(Current::ObjectArray {
                    id,
                    class_id,
                    elements: vec![0; length],
                })
            }
            // Primitive arrays are written whole by the primitive array callback.
            Some(_) => None,
            None => Some(Current::Instance {
                id,
                class_id,
                values: vec![0; layout.map_or(0, |l| l.values_len)],
            }),
        };
    }

    fn fresh(&self) -> i64 {
        self.ctx.ids.fresh() as i64
    }
}

impl HeapVisitor for DumpVisitor<'_> {
    fn reference(
        &mut self,
        kind: ReferenceKind,
        class_tag: i64,
        referrer_class_tag: i64,
        _size: i64,
        tag: i64,
        referrer_tag: Option<i64>,
        length: i32,
    ) -> TagUpdate {
        let mut update = TagUpdate::default();
        let tag = if tag == 0 {
            let t = self.fresh();
            update.tag = Some(t);
            t
        } else {
            tag
        };
        let id = (tag & ID_MASK) as u64;
        if length >= 0
            && tag & DUMPED == 0
            && self
                .layouts
                .get(&(class_tag as u64))
                .and_then(|l| l.array_of)
                == Some(BasicType::Object)
        {
            self.array_lengths.insert(id, length as u32);
        }
        let Some(referrer) = referrer_tag else {
            let root = match kind {
                ReferenceKind::JniGlobal => {
                    self.global_refs += 1;
                    HeapRecord::RootJniGlobal {
                        object_id: id,
                        jni_global_ref_id: self.global_refs,
                    }
                }
                ReferenceKind::SystemClass => HeapRecord::RootStickyClass { object_id: id },
                ReferenceKind::Monitor => HeapRecord::RootMonitorUsed { object_id: id },
                ReferenceKind::StackLocal { thread_tag, depth } => HeapRecord::RootJavaFrame {
                    object_id: id,
                    thread_serial: self
                        .thread_serials
                        .get(&((thread_tag & ID_MASK) as u64))
                        .copied()
                        .unwrap_or(0),
                    frame_number: depth as u32,
                },
                ReferenceKind::JniLocal { thread_tag, depth } => HeapRecord::RootJniLocal {
                    object_id: id,
                    thread_serial: self
                        .thread_serials
                        .get(&((thread_tag & ID_MASK) as u64))
                        .copied()
                        .unwrap_or(0),
                    frame_number: depth as u32,
                },
                ReferenceKind::Thread => HeapRecord::RootThreadObject {
                    thread_object_id: id,
                    thread_serial: self.thread_serials.get(&id).copied().unwrap_or(0),
                    stack_trace_serial: EMPTY_TRACE_SERIAL,
                },
                _ => HeapRecord::RootUnknown { object_id: id },
            };
            self.record(&root);
            return update;
        };
        let referrer = if referrer == 0 {
            let t = self.fresh();
            update.referrer = Some(t);
            t
        } else {
            referrer
        };
        let referrer_id = (referrer & ID_MASK) as u64;
        if self.layouts.contains_key(&referrer_id) {
            let extras = self.extras.entry(referrer_id).or_default();
            match kind {
                ReferenceKind::StaticField(index) => {
                    if let Some(Slot::Static { position }) =
                        self.layouts[&referrer_id].slots.get(&index)
                    {
                        extras.statics.insert(*position, Value::Object(id));
                    }
                }
                ReferenceKind::ConstantPool(index) => {
                    extras.constant_pool.push((index as u16, Value::Object(id)))
                }
                ReferenceKind::ClassLoader => extras.loader = id,
                ReferenceKind::Signers => extras.signers = id,
                ReferenceKind::ProtectionDomain => extras.domain = id,
                _ => {}
            }
            return update;
        }
        self.select(referrer_id, referrer_class_tag as u64);
        if referrer & DUMPED == 0 {
            update.referrer = Some(update.referrer.unwrap_or(referrer) | DUMPED);
        }
        match (kind, &mut self.current) {
            (
                ReferenceKind::Field(index),
                Some(Current::Instance {
                    class_id, values, ..
                }),
            ) => {
                if let Some(Slot::Instance { offset, .. }) =
                    self.layouts.get(class_id).and_then(|l| l.slots.get(&index))
                    && let Some(slot) = values.get_mut(*offset..*offset + 8)
                {
                    slot.copy_from_slice(&id.to_be_bytes());
                }
            }
            (ReferenceKind::ArrayElement(index), Some(Current::ObjectArray { elements, .. })) => {
                if let Some(e) = elements.get_mut(index as usize) {
                    *e = id;
                }
            }
            _ => {}
        }
        update
    }

    fn primitive_field(
        &mut self,
        is_static: bool,
        index: i32,
        class_tag: i64,
        tag: i64,
        bits: u64,
        ty: u8,
    ) -> Option<i64> {
        let (tag, new) = if tag == 0 {
            let t = self.fresh();
            (t, Some(t))
        } else {
            (tag, None)
        };
        let id = (tag & ID_MASK) as u64;
        let ty = primitive_type(ty);
        if is_static {
            if let Some(Slot::Static { position }) =
                self.layouts.get(&id).and_then(|l| l.slots.get(&index))
            {
                let value = value_from_bits(ty, bits);
                self.extras
                    .entry(id)
                    .or_default()
                    .statics
                    .insert(*position, value);
            }
            return new;
        }
        self.select(id, class_tag as u64);
        if let Some(Current::Instance {
            class_id, values, ..
        }) = &mut self.current
            && let Some(Slot::Instance { offset, .. }) =
                self.layouts.get(class_id).and_then(|l| l.slots.get(&index))
        {
            let size = ty.size(IdSize::Eight);
            let be = bits.to_be_bytes();
            if let Some(slot) = values.get_mut(*offset..*offset + size) {
                slot.copy_from_slice(&be[8 - size..]);
            }
        }
        Some(new.unwrap_or(tag) | DUMPED)
    }

    fn primitive_array(
        &mut self,
        _class_tag: i64,
        _size: i64,
        tag: i64,
        count: i32,
        ty: u8,
        elements: &[u8],
    ) -> Option<i64> {
        self.flush();
        let tag = if tag == 0 { self.fresh() } else { tag };
        let element_type = primitive_type(ty);
        let size = element_type.size(IdSize::Eight);
        // JVMTI gives the elements in the machine's byte order; HPROF is big-endian.
        let mut data = elements.to_vec();
        if cfg!(target_endian = "little") && size > 1 {
            for chunk in data.chunks_exact_mut(size) {
                chunk.reverse();
            }
        }
        self.record(&HeapRecord::PrimitiveArrayDump {
            array_id: (tag & ID_MASK) as u64,
            stack_trace_serial: EMPTY_TRACE_SERIAL,
            element_type,
            length: count.max(0) as u32,
            data: &data,
        });
        Some(tag | DUMPED)
    }
}

fn value_from_bits(ty: BasicType, bits: u64) -> Value {
    match ty {
        BasicType::Boolean => Value::Boolean(bits as u8),
        BasicType::Char => Value::Char(bits as u16),
        BasicType::Float => Value::Float(f32::from_bits(bits as u32)),
        BasicType::Double => Value::Double(f64::from_bits(bits)),
        BasicType::Byte => Value::Byte(bits as u8 as i8),
        BasicType::Short => Value::Short(bits as u16 as i16),
        BasicType::Int => Value::Int(bits as u32 as i32),
        BasicType::Long => Value::Long(bits as i64),
        BasicType::Object => Value::Object(bits),
    }
}

fn zero(ty: BasicType) -> Value {
    value_from_bits(ty, 0)
}

/// Why the JVMTI heap walk must not run in this JVM now, if it must not. JDK 25's
/// FollowReferences visits each `java.lang.VirtualThread` object to report its stack, and
/// reads its continuation without checking for null: a terminated virtual thread that is still
/// reachable (its continuation cleared) crashes the JVM (SIGSEGV in
/// `JvmtiEnvBase::is_vthread_alive` ← `VM_HeapWalkOperation::collect_vthread_stack_refs`).
fn walk_would_crash(ctx: &Context, jni: Jni) -> Option<String> {
    let version = ctx.jvmti.feature_version()?;
    if version < 25 {
        return None;
    }
    let class = jni.find_class(c"java/lang/VirtualThread")?;
    let count = ctx.jvmti.count_instances(class).unwrap_or(1);
    jni.delete_local_ref(class);
    (count > 0).then(|| {
        format!(
            "the heap holds {count} virtual thread objects, and JDK {version}'s JVMTI heap walk crashes the JVM on a terminated one (see docs/compatibility.md)"
        )
    })
}
