/** A `.sql` file imported as its text (the bundler's and the test runner's text loader). */
declare module '*.sql' {
  const text: string;
  export default text;
}
