// Precision module, double precision (needs the adapter's SHADER_F64).
alias real = f64;
alias real2 = vec2<f64>;
alias real4 = vec4<f64>;
alias real4x4 = mat4x4<f64>;
