//! The annotation names that the simulator, the stand-in controller and the helpers share.

/// The Pod annotation that picks the behaviour of every container.
pub const BEHAVIOR_ANNOTATION: &str = "sim.mdiag.dev/behavior";

/// Every annotation with this prefix is copied from a ModelService to its
/// pod template by the stand-in controller.
pub const SIM_ANNOTATION_PREFIX: &str = "sim.mdiag.dev/";

/// The Node annotation that stops (`"true"`) a fake node.
pub const STOPPED_ANNOTATION: &str = "sim.mdiag.dev/stopped";
