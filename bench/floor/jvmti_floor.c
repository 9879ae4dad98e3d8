/* A minimal JVMTI agent that measures what the JVM itself charges for the mechanisms the
 * heap=sites and heap=dump issues prescribe, with no work of ours on top: the floor under
 * any agent built on them. Options (comma-separated):
 *   alloc   SampledObjectAlloc at interval 0 (every allocation), empty callback
 *   stack   ... plus GetStackTrace of the allocating thread, 4 frames (heap=sites' depth)
 *   tag     ... plus SetTag on every object (heap=sites' liveness), ObjectFree enabled
 *   walk    at each SIGQUIT: ForceGarbageCollection, then FollowReferences in a fresh JVMTI
 *           environment that tags every object it reaches with a serial number (how an
 *           agent names objects in a dump), then disposes of it; prints the times on stderr.
 *           From the second SIGQUIT on, the walk also receives every primitive field and
 *           primitive array (empty callbacks), as a dump that writes values must.
 * Built and run by bench/jvmti_floor.py. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static JavaVM *vm;
static int opt_stack, opt_tag, opt_walk, walks;
static jlong next_tag = 1;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void JNICALL on_alloc(jvmtiEnv *env, JNIEnv *jni, jthread thread, jobject object,
                             jclass klass, jlong size) {
    (void)jni; (void)klass; (void)size;
    if (opt_stack) {
        jvmtiFrameInfo frames[4];
        jint count = 0;
        (*env)->GetStackTrace(env, thread, 0, 4, frames, &count);
    }
    if (opt_tag) {
        (*env)->SetTag(env, object, __atomic_fetch_add(&next_tag, 1, __ATOMIC_RELAXED));
    }
}

static void JNICALL on_free(jvmtiEnv *env, jlong tag) { (void)env; (void)tag; }

static jlong walked;

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                 jlong class_tag, jlong referrer_class_tag, jlong size,
                                 jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
                                 void *user_data) {
    (void)kind; (void)info; (void)class_tag; (void)referrer_class_tag; (void)size;
    (void)referrer_tag_ptr; (void)length; (void)user_data;
    if (*tag_ptr == 0) {
        *tag_ptr = ++walked;
    }
    return JVMTI_VISIT_OBJECTS;
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind,
                                       const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                       jlong *tag_ptr, jvalue value, jvmtiPrimitiveType type,
                                       void *user_data) {
    (void)kind; (void)info; (void)class_tag; (void)tag_ptr; (void)value; (void)type;
    (void)user_data;
    return 0;
}

static jint JNICALL on_array(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                             jvmtiPrimitiveType type, const void *elements, void *user_data) {
    (void)class_tag; (void)size; (void)tag_ptr; (void)count; (void)type; (void)elements;
    (void)user_data;
    return 0;
}

static void JNICALL on_dump_request(jvmtiEnv *env) {
    if (!opt_walk) {
        return;
    }
    double t0 = now();
    (*env)->ForceGarbageCollection(env);
    double t1 = now();
    jvmtiEnv *walker = NULL;
    if ((*vm)->GetEnv(vm, (void **)&walker, JVMTI_VERSION_11) != JNI_OK) {
        fprintf(stderr, "FLOOR: no JVMTI environment for the walk\n");
        return;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    (*walker)->AddCapabilities(walker, &caps);
    jvmtiHeapCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.heap_reference_callback = on_reference;
    int prims = walks++ > 0;
    if (prims) {
        callbacks.primitive_field_callback = on_primitive_field;
        callbacks.array_primitive_value_callback = on_array;
    }
    walked = 0;
    jvmtiError e = (*walker)->FollowReferences(walker, 0, NULL, NULL, &callbacks, NULL);
    double t2 = now();
    (*walker)->DisposeEnvironment(walker);
    double t3 = now();
    fprintf(stderr, "FLOOR walk%s: error %d, %lld objects, gc %.3f s, walk %.3f s, dispose %.3f s, total %.3f s\n",
            prims ? " with values" : "", e, (long long)walked, t1 - t0, t2 - t1, t3 - t2, t3 - t0);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *jvm, char *options, void *reserved) {
    (void)reserved;
    vm = jvm;
    const char *o = options ? options : "";
    int alloc = strstr(o, "alloc") != NULL;
    opt_stack = strstr(o, "stack") != NULL;
    opt_tag = strstr(o, "tag") != NULL;
    opt_walk = strstr(o, "walk") != NULL;
    jvmtiEnv *env;
    if ((*jvm)->GetEnv(jvm, (void **)&env, JVMTI_VERSION_11) != JNI_OK) {
        return JNI_ERR;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_sampled_object_alloc_events = alloc;
    caps.can_tag_objects = opt_tag;
    caps.can_generate_object_free_events = opt_tag;
    if ((*env)->AddCapabilities(env, &caps) != JVMTI_ERROR_NONE) {
        return JNI_ERR;
    }
    jvmtiEventCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.SampledObjectAlloc = on_alloc;
    callbacks.ObjectFree = on_free;
    callbacks.DataDumpRequest = on_dump_request;
    (*env)->SetEventCallbacks(env, &callbacks, sizeof callbacks);
    if (alloc) {
        (*env)->SetHeapSamplingInterval(env, 0);
        (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    }
    if (opt_tag) {
        (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
    }
    if (opt_walk) {
        (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_DATA_DUMP_REQUEST, NULL);
    }
    return JNI_OK;
}
