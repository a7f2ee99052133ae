// Swagger UI for /openapi.json. Its requests carry the token the web UI keeps in this
// tab (sessionStorage), so "Try it out" works on a server that needs one; the token is
// never put in a URL.
const TOKEN_KEY = "headwater.token";

window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  validatorUrl: null, // the default is an outside service: the page loads nothing from outside
  presets: [SwaggerUIBundle.presets.apis],
  requestInterceptor: (request) => {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) request.headers.Authorization = `Bearer ${token}`;
    return request;
  },
});
