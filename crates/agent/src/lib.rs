//! The HPROF JVMTI agent.
