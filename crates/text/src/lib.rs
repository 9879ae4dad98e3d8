//! Renders profile data in the java.hprof.txt text layout.
