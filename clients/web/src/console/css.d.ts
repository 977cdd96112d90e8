// A stylesheet imported by a staff bundle is its text (build.mjs: the
// ".css" loader of the staff pages).
declare module "*.css" {
  const text: string;
  export default text;
}
