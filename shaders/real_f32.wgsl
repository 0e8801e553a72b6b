// Precision module, single precision. Exactly one precision module is placed
// first in every pipeline's source (see src/gpu/shader.rs); the other modules
// are written against these aliases only.
alias real = f32;
alias real2 = vec2<f32>;
alias real4 = vec4<f32>;
alias real4x4 = mat4x4<f32>;
